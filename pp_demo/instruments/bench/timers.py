"""The pipeline's steps on each rank, timed from the inside.

A ``BenchJob`` runs on every rank, given its ``StageCache`` by
``pp_demo.ranks.on_rank.run_on_rank``, and calls the runner's own step, ``pipeline_step``;
around it, on this rank only, it records intervals on the machine's monotonic clock (one for
all its processes, so the ranks' intervals line up):

* ``"F"``, ``"B"``: the stage's forward and backward of one micro-batch (the engine's
  ``forward_one_chunk`` / ``backward_one_chunk``), ``"L"``: the loss on the last stage;
* ``"W"``: every wait of the schedule on its sends and receives (its ``_wait_batch_p2p``);

and, per kind, the CPU seconds the rank's thread spent in it (``Recorder``). What is neither is
the engine's bookkeeping. ``breakdown`` turns the intervals into the breakdown; nothing here
derives from the ideal.

Why the engine's functions are wrapped, private as they are, and torch's profiler marks are not
read instead: the installed schedules mark ``record_function("Forward i")`` and ``("Backward i")``
in GPipe only (1F1B's steps carry no mark), and each mark spans the micro-batch's receive wait, its
compute and its send, so the marks give neither the compute apart from the waiting ("F" vs "W"),
nor the loss ("L"), nor the CPU seconds of each phase; the profiler would also time every operator
inside them, which stretches the very steps being timed. Where a torch release renames one of the
wrapped functions, the benchmark fails at its first step rather than time something else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.pipelining import schedules as engine

from .allocator import fix_malloc_thresholds
from .breakdown import Interval
from .one_process import BenchSize

__all__ = ["BenchJob", "Recorder"]


@dataclass
class Recorder:
    """Intervals by kind on the machine's clock, and the CPU seconds this thread spent in each
    kind: work done, whatever else the machine runs (a busy machine stretches the intervals,
    not these), so the two engines' phases compare even on a shared machine."""

    intervals: list[Interval] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    _process_cpu: float = 0.0

    def start_step(self) -> float:
        """Forget the last step; the step's start on the machine's clock."""
        self.intervals, self.cpu, self._process_cpu = [], {}, time.process_time()
        return time.monotonic()

    def end_step(self, start: float) -> tuple[float, float, list[Interval], dict[str, float]]:
        """The step as ``breakdown.step_breakdown`` reads it; ``cpu["step"]`` is the whole process's
        CPU time in the step (its communication threads too)."""
        cpu = {**self.cpu, "step": time.process_time() - self._process_cpu}
        return start, time.monotonic(), self.intervals, cpu

    def timed(self, kind: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.monotonic(), time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                self.intervals.append((kind, start, time.monotonic()))
                self.cpu[kind] = self.cpu.get(kind, 0.0) + time.thread_time() - cpu

        return wrapper


@dataclass(frozen=True)
class BenchJob:
    """``warmup`` + ``repeats`` steps of each mode on ``n_stages`` ranks with ``n_micro``
    micro-batches. The answer (the last rank's): per rank, its schedule per mode and its
    timed steps per mode as (start, end, intervals, CPU seconds per kind)."""

    size: BenchSize
    n_micro: int
    n_stages: int = 2
    modes: tuple[str, ...] = ("inference", "training")
    warmup: int = 1
    repeats: int = 3

    def run_on_rank(self, rank: int, world_size: int, cache: Any, device: torch.device) -> dict[str, Any]:
        from pp_demo.ranks.jobs import Job, even_split_points
        from pp_demo.ranks.on_rank import pipeline_step

        fix_malloc_thresholds()  # as in every process the benchmark times
        torch.manual_seed(0)
        model, (ids, mask, labels) = self.size.model().to(device), self.size.batch_tensors()
        points = even_split_points(self.size.layers, world_size)
        options: dict[str, Any] = {"split_points": points, "n_micro": self.n_micro}
        recorder, plain_wait = Recorder(), engine._wait_batch_p2p
        engine._wait_batch_p2p = recorder.timed("W", plain_wait)  # this rank's process only
        try:
            steps: dict[str, list[Any]] = {}
            names: dict[str, str] = {}
            for mode in self.modes:
                training = mode == "training"
                batch = (ids, mask, labels) if training else (ids, mask)
                job = (Job.step if training else Job.infer)(model, *batch, **options)
                schedule, module = cache.get(job, ids.shape, training)
                module.train(training)
                names[mode] = type(schedule).__name__
                stage = schedule._stage
                stage.forward_one_chunk = recorder.timed("F", stage.forward_one_chunk)
                stage.backward_one_chunk = recorder.timed("B", stage.backward_one_chunk)
                schedule._maybe_compute_loss = recorder.timed("L", schedule._maybe_compute_loss)
                steps[mode] = []
                for k in range(self.warmup + self.repeats):
                    dist.barrier()
                    start = recorder.start_step()
                    model.zero_grad(set_to_none=True)
                    with torch.set_grad_enabled(training):
                        pipeline_step(schedule, rank, world_size, ids, mask, labels if training else None, [])
                    if k >= self.warmup:
                        steps[mode].append(recorder.end_step(start))
        finally:
            engine._wait_batch_p2p = plain_wait
        # the runner keeps the last rank's answer: it gathers every rank's
        gathered: list[Any] | None = [None] * world_size if rank == world_size - 1 else None
        dist.gather_object({"schedule": names, "steps": steps}, gathered, dst=world_size - 1)
        return {"ranks": gathered}
