"""What each of the two ranks does: its stage of the split model, one engine per shape.

Rank 0 holds the first stage, rank 1 the last; ``PipelineStage`` moves the hidden
states, ``input_ids`` and the mask between them; ``ScheduleGPipe`` runs inference and
``Schedule1F1B`` training. Starting the ranks is ``pp_demo.distributed``'s business.

The engine fixes its shapes at a stage's first step and afterwards gives wrong logits,
aborts or returns extra rows for other shapes. So a stage and its schedule are built
per shape (``_StageCache``); a batch that does not split evenly is refused earlier.
"""

import os
import signal
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

from .rules import FIX
from .stages import split_model

__all__ = ["WORLD_SIZE", "Fault", "Job", "TrainJob", "JobResult", "backend_and_device", "run_jobs"]

WORLD_SIZE = 2


@dataclass(frozen=True)
class Fault:
    """A failure injected on purpose (tests, the notebook): on ``rank``, at the forward of
    micro-batch ``at``, ``"raise"`` an exception, ``"kill"`` the process or ``"hang"``."""

    rank: int
    how: str = "raise"
    at: int = 1


@dataclass
class Job:
    """One batch for the two ranks: inference (``labels`` None) or one training step."""

    model: nn.Module
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor | None = None
    rule: str = FIX
    split_at: int | None = None
    n_micro: int = 1
    fault: Fault | None = None


@dataclass
class TrainJob:
    """Optimizer steps through the pipeline (1F1B), one per batch of ``(ids, mask, labels)``,
    from the model's weights as they are. Adam on each rank over its own stage's
    parameters; every batch must have the same shape (one engine)."""

    model: nn.Module
    batches: list
    rule: str = FIX
    split_at: int | None = None
    n_micro: int = 1
    lr: float = 1e-2
    fault: Fault | None = None


@dataclass
class JobResult:
    logits: torch.Tensor | None = None            # last stage's output, whole batch
    loss: float | None = None                     # mean over micro-batches (training)
    grads: dict[str, torch.Tensor] = field(default_factory=dict)  # by the model's parameter names
    losses: list[float] = field(default_factory=list)             # per step (TrainJob)
    step_logits: list[torch.Tensor] = field(default_factory=list)  # per step (TrainJob)
    params: dict[str, torch.Tensor] = field(default_factory=dict)  # trained, by name (TrainJob)
    timings: dict[str, float] = field(default_factory=dict)        # seconds (pp_demo.bench)


def backend_and_device(rank):
    """NCCL with one GPU per rank when there are two GPUs; otherwise gloo on the CPU."""
    if torch.cuda.device_count() >= WORLD_SIZE:
        return "nccl", torch.device("cuda", rank)
    return "gloo", torch.device("cpu")


# ------------------------------------------------------------------ one rank

class _Faulty(nn.Module):
    def __init__(self, stage, fault):
        super().__init__()
        self.stage, self.fault, self.calls = stage, fault, 0

    def forward(self, *args):
        if self.calls == self.fault.at:
            if self.fault.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.fault.how == "hang":
                time.sleep(24 * 3600)
            raise RuntimeError(f"fault injected at micro-batch {self.fault.at}")
        self.calls += 1
        return self.stage(*args)


def _loss(logits, labels):
    # mean over the micro-batch; the schedule divides gradients by the micro-batch count,
    # so equal micro-batches give the gradient of the mean over the whole batch
    return F.cross_entropy(logits, labels)


class _StageCache:
    """One ``PipelineStage`` and schedule per shape: the engine cannot change shape."""

    def __init__(self, rank, device):
        self.rank, self.device, self.built = rank, device, {}

    def _example_args(self, job, shape, training):
        """Shapes of one micro-batch in and out of this rank's stage, given up front: the
        engine would otherwise infer them by running the stage on uninitialised tensors,
        where a pooling rule computes an index (or checks a mask) from garbage."""
        rows = shape[0] // job.n_micro
        ids = torch.zeros(rows, shape[1], dtype=torch.long, device=self.device)
        mask = torch.zeros_like(ids)
        dtype = next(job.model.parameters()).dtype
        hidden = torch.zeros(*ids.shape, job.model.config.hidden_size, dtype=dtype, device=self.device)
        hidden.requires_grad_(training)  # tells the engine to send its gradient back
        logits = torch.zeros(rows, job.model.config.num_labels, dtype=dtype, device=self.device)
        return ((ids, mask), (hidden, ids, mask)) if self.rank == 0 else ((hidden, ids, mask), logits)

    def get(self, job, shape, training):
        key = (id(job.model), job.rule, job.split_at, job.n_micro, training, tuple(shape), job.fault)
        if key not in self.built:
            module = split_model(job.model, job.split_at, job.rule)[self.rank]
            if job.fault is not None and job.fault.rank == self.rank:
                module = _Faulty(module, job.fault)
            stage = PipelineStage(module, self.rank, WORLD_SIZE, self.device, *self._example_args(job, shape, training))
            if not training:
                schedule = ScheduleGPipe(stage, job.n_micro)
            elif job.n_micro >= WORLD_SIZE:
                schedule = Schedule1F1B(stage, job.n_micro, loss_fn=_loss)
            else:  # 1F1B needs a micro-batch per stage; with one, GPipe's fill-drain is the same
                schedule = ScheduleGPipe(stage, job.n_micro, loss_fn=_loss)
            self.built[key] = schedule, module
        return self.built[key]


def _grads_by_name(model):
    return {name: p.grad.detach().cpu().clone() for name, p in model.named_parameters() if p.grad is not None}


def _train(rank, job, cache, device):
    ids, mask, _ = job.batches[0]
    schedule, module = cache.get(job, ids.shape, training=True)
    module.train()
    optimizer = torch.optim.Adam(module.parameters(), lr=job.lr)
    result, touched = JobResult(), set()
    for ids, mask, labels in job.batches:
        optimizer.zero_grad(set_to_none=True)
        if rank == 0:
            schedule.step(ids.to(device).contiguous(), mask.to(device).contiguous())
        else:
            losses = []
            out = schedule.step(target=labels.to(device), losses=losses)
            result.losses.append(float(torch.stack(losses).detach().mean()))
            result.step_logits.append(out.detach().cpu())
        touched |= {id(p) for p in module.parameters() if p.grad is not None}
        optimizer.step()
    # only this rank's stage was trained here; the caller merges both ranks' parameters
    result.params = {n: p.detach().cpu().clone() for n, p in job.model.named_parameters() if id(p) in touched}
    return result


def run_jobs(rank, jobs, device):
    """Run every job on this rank (the process group is up); results matter on the last rank."""
    cache, results = _StageCache(rank, device), []
    for job in jobs:
        if hasattr(job, "run_on_rank"):  # a job that drives the stages itself (pp_demo.bench)
            results.append(job.run_on_rank(rank, cache, device))
            continue
        job.model.to(device)
        if isinstance(job, TrainJob):
            results.append(_train(rank, job, cache, device))
            continue
        schedule, module = cache.get(job, job.input_ids.shape, training=job.labels is not None)
        module.train(job.labels is not None)  # the stage holds copies of the body: set its mode
        ids, mask = job.input_ids.to(device).contiguous(), job.attention_mask.to(device).contiguous()
        result = JobResult()
        if job.labels is None:
            with torch.no_grad():
                out = schedule.step(ids, mask) if rank == 0 else schedule.step()
            result.logits = None if out is None else out.detach().cpu()
        else:
            job.model.zero_grad(set_to_none=True)
            losses = []
            if rank == 0:
                schedule.step(ids, mask)
            else:
                out = schedule.step(target=job.labels.to(device), losses=losses)
                result.logits = out.detach().cpu()
                result.loss = float(torch.stack(losses).detach().mean())
            result.grads = _grads_by_name(job.model)
        results.append(result)
    return results
