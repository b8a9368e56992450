"""What each rank does: its stage of the split model, one engine per shape, one step helper.

Rank r of p holds stage r; ``PipelineStage`` moves the hidden states, ``input_ids`` and the
mask from stage to stage; ``ScheduleGPipe`` or ``Schedule1F1B`` orders the micro-batches.
Starting the ranks is ``pp_demo.pipeline.launch``'s business.

The engine fixes its shapes at a stage's first step and afterwards gives wrong logits,
aborts or returns extra rows for other shapes. So a stage and its schedule are built
per shape (``StageCache``); a batch that does not split evenly is refused earlier.
Each rank returns a plain dict per job (its own stage's gradients or parameters; the
logits and losses on the last rank); ``merge`` makes the job's typed result from them.
"""

import os
import signal
import time
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

from pp_demo.pipeline.jobs import Fault, Inference, Job, Result, Step, Training, micro_batch_loss, parameter_copies
from pp_demo.pipeline.stages import split_model

__all__ = ["backend_and_device", "StageCache", "RankJob", "pipeline_step", "run_on_rank", "merge"]

_SCHEDULES = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}


def backend_and_device(rank: int, world_size: int) -> tuple[str, torch.device]:
    """NCCL with one GPU per rank when there are enough GPUs; otherwise gloo on the CPU."""
    if torch.cuda.device_count() >= world_size:
        return "nccl", torch.device("cuda", rank)
    return "gloo", torch.device("cpu")


class _Faulty(nn.Module):
    def __init__(self, stage: nn.Module, fault: Fault) -> None:
        super().__init__()
        self.stage, self.fault, self.calls = stage, fault, 0

    def forward(self, *args: torch.Tensor) -> Any:
        if self.calls == self.fault.at:
            if self.fault.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.fault.how == "hang":
                time.sleep(24 * 3600)
            raise RuntimeError(f"fault injected at micro-batch {self.fault.at}")
        self.calls += 1
        return self.stage(*args)


class StageCache:
    """One ``PipelineStage`` and schedule per job shape on this rank: the engine cannot change shape."""

    def __init__(self, rank: int, world_size: int, device: torch.device) -> None:
        self.rank, self.world_size, self.device = rank, world_size, device
        self.built: dict[tuple[Any, ...], tuple[Any, nn.Module]] = {}

    def _example_args(
        self, job: Job, shape: Sequence[int], training: bool
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor | tuple[torch.Tensor, ...]]:
        """Shapes of one micro-batch in and out of this rank's stage, given up front: the
        engine would otherwise infer them by running the stage on uninitialised tensors,
        where a pooling rule computes an index (or checks a mask) from garbage."""
        rows = shape[0] // job.n_micro
        ids = torch.zeros(rows, shape[1], dtype=torch.long, device=self.device)
        mask = torch.zeros_like(ids)
        dtype = next(job.model.parameters()).dtype
        config: Any = job.model.config
        hidden = torch.zeros(*ids.shape, config.hidden_size, dtype=dtype, device=self.device)
        hidden.requires_grad_(training)  # tells the engine to send its gradient back
        logits = torch.zeros(rows, config.num_labels, dtype=dtype, device=self.device)
        inputs: tuple[torch.Tensor, ...] = (ids, mask) if self.rank == 0 else (hidden, ids, mask)
        outputs: torch.Tensor | tuple[torch.Tensor, ...] = (
            logits if self.rank == self.world_size - 1 else (hidden, ids, mask)
        )
        return inputs, outputs

    def get(self, job: Job, shape: Sequence[int], training: bool) -> tuple[Any, nn.Module]:
        kind = job.schedule_for(self.world_size)
        key = (id(job.model), job.rule, job.split_points, job.n_micro, kind, training, tuple(shape), job.fault)
        if key not in self.built:
            module: nn.Module = split_model(job.model, job.split_points, job.rule)[self.rank]
            if job.fault is not None and job.fault.rank == self.rank:
                module = _Faulty(module, job.fault)
            stage = PipelineStage(
                module, self.rank, self.world_size, self.device, *self._example_args(job, shape, training)
            )
            self.built[key] = (
                _SCHEDULES[kind](stage, job.n_micro, loss_fn=micro_batch_loss if training else None),
                module,
            )
        return self.built[key]


@runtime_checkable
class RankJob(Protocol):
    """A job that drives the pipeline's steps on each rank itself (``pp_demo.bench``'s
    ``BenchJob``, ``pp_demo.pipeline.engine_probes``): every rank calls its ``run_on_rank`` with the
    rank's ``StageCache``, and the last rank's answer is the job's result. It is not a
    ``Job`` and is never checked or prepared: it builds its own ``Job``s on the ranks.
    Defined here, not in ``pp_demo.pipeline.jobs``, because its signature needs ``StageCache``."""

    @property
    def n_stages(self) -> int:
        """How many ranks ``run`` starts for it (under torchrun, torchrun's world size)."""
        ...

    def run_on_rank(self, rank: int, world_size: int, cache: StageCache, device: torch.device) -> Any:
        """This rank's part of the job; the last rank's is the job's result."""
        ...


def pipeline_step(
    schedule: Any,
    rank: int,
    world_size: int,
    ids: torch.Tensor | None,
    mask: torch.Tensor | None,
    labels: torch.Tensor | None = None,
    losses: list[torch.Tensor] | None = None,
) -> Any:
    """One step of the schedule on this rank, for inference, training and the benchmark
    alike: the first stage feeds the batch, the last gets the target (when training) and
    returns the logits; a middle stage only relays."""
    args = (ids, mask) if rank == 0 else ()
    kwargs = {"target": labels, "losses": losses} if rank == world_size - 1 and labels is not None else {}
    return schedule.step(*args, **kwargs)


def _run_job(rank: int, world_size: int, job: Job, cache: StageCache, device: torch.device) -> dict[str, Any]:
    training = job.mode != "infer"
    ids, mask, _ = job.batch.as_tuple()
    schedule, module = cache.get(job, ids.shape, training)
    module.train(training)  # the stage holds copies of the body: set its mode
    # the stage's copy of the body still holds the modules it bypasses (shared with the model,
    # never used here): what this rank owns is what got a gradient
    touched: set[int] = set()
    optimizer = torch.optim.Adam(module.parameters(), lr=job.lr) if job.mode == "train" else None
    part: dict[str, Any] = {"losses": [], "logits": []}
    for step, batch in enumerate(job.batches, 1):
        moved = [None if t is None else t.to(device).contiguous() for t in batch.as_tuple()]
        rows, rows_mask, labels = moved
        job.model.zero_grad(set_to_none=True)
        losses: list[torch.Tensor] = []
        with torch.set_grad_enabled(training):
            out = pipeline_step(schedule, rank, world_size, rows, rows_mask, labels if training else None, losses)
        if rank == world_size - 1:
            part["logits"].append(out.detach().cpu())
            if losses:
                part["losses"].append(float(torch.stack(losses).detach().mean()))
        touched |= {id(p) for p in module.parameters() if p.grad is not None}
        if optimizer is not None:
            optimizer.step()
        if job.mode == "train" and job.keep_params_every and step % job.keep_params_every == 0:
            part.setdefault("params_at", {})[step] = parameter_copies(job.model, lambda p: p, touched)
    if job.mode == "step":
        part["grads"] = parameter_copies(job.model, lambda p: p.grad, touched)
    if job.mode == "train":
        part["params"] = parameter_copies(job.model, lambda p: p, touched)
    return part


def run_on_rank(rank: int, world_size: int, jobs: Sequence[Job | RankJob], device: torch.device) -> list[Any]:
    """Run every job on this rank (the process group is up): one part per job."""
    cache, parts = StageCache(rank, world_size, device), []
    for job in jobs:
        if isinstance(job, RankJob):
            parts.append(job.run_on_rank(rank, world_size, cache, device))
            continue
        job.model.to(device)
        parts.append(_run_job(rank, world_size, job, cache, device))
    return parts


def merge(job: Job | RankJob, parts: list[Any], device: str) -> Result:
    """The job's result from every rank's part (rank order)."""
    if isinstance(job, RankJob):
        result: Result = parts[-1]
        return result
    last = parts[-1]
    if job.mode == "infer":
        return Inference(last["logits"][0], device)
    if job.mode == "step":
        return Step(last["logits"][0], last["losses"][0], {k: v for p in parts for k, v in p["grads"].items()}, device)
    params_at = {
        step: {k: v for p in parts for k, v in p["params_at"][step].items()} for step in last.get("params_at", {})
    }
    return Training(
        last["losses"], last["logits"], {k: v for p in parts for k, v in p["params"].items()}, device, params_at
    )
