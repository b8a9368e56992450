"""The work being timed, and one-process runs of it: the baseline and the machine's capacity.

Every one-process run here happens in a fresh child process with one thread, started the
way the pipeline's ranks are, so a rank and a baseline process differ only in what they run.

* ``one_process_times``: alone on the machine, the whole batch, and for each m the same
  m micro-batches one after the other through the same stage modules the ranks hold;
* ``capacity``: two such processes running the whole-batch work at the same time, each
  repeat started together. Each of the two is itself a one-process run of the work, so
  the best alone time counts them too, and ``c = 2 * best alone / pair`` is <= 2 by
  construction: a pair never ends before its slower member.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F

from .allocator import fix_malloc_thresholds

__all__ = ["BenchSize", "Task", "Times", "one_process_times", "capacity"]

Task = tuple[str, int]  # (mode, m); m = 0 is the whole batch in one piece
Times = dict[str, list[float]]  # each task's run durations, by ``"mode/m"``


@dataclass(frozen=True)
class BenchSize:
    """A Llama-shaped model where compute dominates communication and per-call overheads.
    Six layers cut evenly into two stages of 3 and three of 2; the batch splits into 2, 4, 8."""

    hidden: int = 512
    layers: int = 6
    seq: int = 128
    batch: int = 16
    family: str = "llama"

    def model(self) -> torch.nn.Module:
        from pp_demo.core import build_model

        model: torch.nn.Module = build_model(
            self.family,
            hidden_size=self.hidden,
            num_hidden_layers=self.layers,
            intermediate_size=2 * self.hidden,
            num_attention_heads=8,
            num_key_value_heads=8,
            vocab_size=1024,
            max_position_embeddings=max(64, self.seq),
        )
        return model

    def batch_tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(0)
        ids = torch.randint(1, 1024, (self.batch, self.seq), generator=generator)
        ids[: self.batch // 2, : self.seq // 4] = 0  # half the rows left-padded
        return ids, (ids != 0).long(), torch.randint(0, 3, (self.batch,), generator=generator)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _step(size: BenchSize, mode: str, m: int) -> Any:
    """One step of the work as a callable: inference, or a training step (gradients set
    to None, forward, backward; no optimizer), on the whole batch or m micro-batches in turn."""
    from pp_demo.core import micro_batches, split_model
    from pp_demo.ranks.jobs import even_split_points

    model, (ids, mask, labels) = size.model(), size.batch_tensors()
    training = mode == "training"
    model.train(training)
    stages = split_model(model, even_split_points(size.layers, 2))
    for stage in stages:
        stage.train(training)
    pieces = [slice(None)] if m == 0 else micro_batches(size.batch, m)

    def logits(rows: slice) -> Any:
        if m == 0:
            return model(input_ids=ids, attention_mask=mask).logits
        return stages.logits(ids[rows].contiguous(), mask[rows].contiguous())

    def step() -> None:
        model.zero_grad(set_to_none=True)
        with torch.set_grad_enabled(training):
            for rows in pieces:
                out = logits(rows)
                if training:
                    (F.cross_entropy(out, labels[rows]) / len(pieces)).backward()

    return step


def _worker(size: BenchSize, tasks: list[Task], warmup: int, repeats: int, barrier: Any, out: Any) -> None:
    fix_malloc_thresholds()  # as in every process the benchmark times
    torch.set_num_threads(1)
    times: Times = {}
    for mode, m in tasks:
        step = _step(size, mode, m)
        for k in range(warmup + repeats):
            barrier.wait()  # a pair starts each run together
            start = time.monotonic()
            step()
            if k >= warmup:
                times.setdefault(f"{mode}/{m}", []).append(time.monotonic() - start)
    out.put(times)


def _run_processes(n: int, size: BenchSize, tasks: list[Task], warmup: int, repeats: int) -> list[Times]:
    """``n`` one-thread processes running ``tasks`` in lockstep; each one's run durations."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context: Any = multiprocessing.get_context(method)
    barrier, out = context.Barrier(n), context.Queue()
    processes = [context.Process(target=_worker, args=(size, tasks, warmup, repeats, barrier, out)) for _ in range(n)]
    for process in processes:
        process.start()
    results = [out.get(timeout=1800) for _ in processes]
    for process in processes:
        process.join()
    return results


def one_process_times(size: BenchSize, tasks: list[Task], warmup: int, repeats: int) -> Times:
    """Seconds of each run of each task (``"mode/m"``), one process alone, one thread."""
    return _run_processes(1, size, tasks, warmup, repeats)[0]


def capacity(size: BenchSize, mode: str, alone: list[float], warmup: int, repeats: int) -> dict[str, Any]:
    """This machine's throughput for two one-thread processes, in one-process units (<= 2);
    ``alone``: the whole-batch run times of one process alone."""
    a, b = (times[f"{mode}/0"] for times in _run_processes(2, size, [(mode, 0)], warmup, repeats))
    pair_s = min(max(x, y) for x, y in zip(a, b, strict=True))
    best_alone = min(*alone, *a, *b)
    return {"alone_s": best_alone, "pair_s": pair_s, "c": 2 * best_alone / pair_s}
