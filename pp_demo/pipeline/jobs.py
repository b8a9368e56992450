"""What the pipeline runner is asked to do (``Job``) and what it answers, one type per mode.

A job names everything a run depends on: the model, its batches, the pooling rule, where
the model is cut, the micro-batch count, the schedule, and an optional injected fault.
Three modes, three result types:

* ``"infer"`` -> ``Inference``: the last stage's logits for one batch;
* ``"step"``  -> ``Step``: one forward and backward (no optimizer): loss and gradients;
* ``"train"`` -> ``Training``: Adam steps, one per batch, from the model's weights as
  they are: the loss and logits per step and the trained parameters.

Every result says on which device it was computed, so its tolerance can follow it.
Jobs, batches and results hold tensors, so they compare by identity (``eq=False``).
Jobs are checked here, before any process starts, so a bad one is a one-line error.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch
from torch import nn

from pp_demo.errors import BadInput
from pp_demo.pipeline.stages import check_split_points, count_layers, even_split_points
from pp_demo.pipeline.validate import check_fault, check_tensors
from pp_demo.pooling.rules import FIX, get_rule

__all__ = [
    "Batch",
    "Fault",
    "Job",
    "Inference",
    "Step",
    "Training",
    "Result",
    "Mode",
    "Schedule",
    "micro_batches",
    "check_job",
    "prepare",
]

Mode = Literal["infer", "step", "train"]
Schedule = Literal["gpipe", "1f1b"]


@dataclass(frozen=True, eq=False)
class Batch:
    """Rows of token ids, their attention mask, (for training) one label per row, and a
    name to report it by (the checker's battery names each of its batches)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor | None = None
    name: str = field(default="", kw_only=True)

    def as_tuple(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        return self.input_ids, self.attention_mask, self.labels


@dataclass(frozen=True)
class Fault:
    """A failure injected on purpose (tests, the notebook): on ``rank`` (= stage), at the
    forward of micro-batch ``at``, ``"raise"`` an exception, ``"kill"`` the process or ``"hang"``.
    ``at`` counts the rank's forwards from 0 (over every batch of the job); one the job does
    not reach is refused, and so is a fault for ``run(on="process")``, which has no ranks."""

    rank: int
    how: Literal["raise", "kill", "hang"] = "raise"
    at: int = 1


@dataclass(frozen=True, eq=False)
class Job:
    """One run of the pipeline. Build it with ``Job.infer``, ``Job.step`` or ``Job.train``.

    ``schedule`` None means GPipe for inference and 1F1B for training. 1F1B needs at least
    one micro-batch per stage: with fewer, stage 0's warm-up would already be every forward,
    so there is no steady state, and the engine refuses it. The runner then uses GPipe,
    whose gradients are the same (``pp_demo.pipeline.schedules.schedule_order`` shows both orders).
    """

    model: nn.Module
    batches: tuple[Batch, ...]
    mode: Mode = "infer"
    rule: str = FIX
    split_points: tuple[int, ...] | int | None = None
    n_micro: int = 1
    schedule: Schedule | None = None
    lr: float = 1e-2
    fault: Fault | None = None

    @classmethod
    def infer(cls, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, **options: Any) -> "Job":
        return cls(model, (Batch(input_ids, attention_mask),), "infer", **options)

    @classmethod
    def step(
        cls,
        model: nn.Module,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        labels: torch.Tensor,
        **options: Any,
    ) -> "Job":
        return cls(model, (Batch(input_ids, attention_mask, labels),), "step", **options)

    @classmethod
    def train(
        cls, model: nn.Module, batches: Iterable[Batch | tuple[torch.Tensor, ...]], lr: float = 1e-2, **options: Any
    ) -> "Job":
        """``batches``: ``Batch`` objects (``pp_demo.training.loop.TrainingBatch`` included) or
        ``(ids, mask, labels)`` tuples."""
        rows = tuple(b if isinstance(b, Batch) else Batch(*b) for b in batches)
        return cls(model, rows, "train", lr=lr, **options)

    @property
    def batch(self) -> Batch:
        return self.batches[0]

    def schedule_for(self, n_stages: int) -> Schedule:
        """The schedule this job runs on ``n_stages`` stages (see the class docstring)."""
        if self.mode == "infer":
            return "gpipe"  # forwards only: both schedules run them in the same order
        wanted = self.schedule or "1f1b"
        return "gpipe" if wanted == "1f1b" and self.n_micro < n_stages else wanted


@dataclass(frozen=True, eq=False)
class Inference:
    logits: torch.Tensor  # the last stage's output, whole batch
    device: str


@dataclass(frozen=True, eq=False)
class Step:
    logits: torch.Tensor
    loss: float  # mean over micro-batches
    grads: dict[str, torch.Tensor]  # by the model's parameter names
    device: str


@dataclass(frozen=True, eq=False)
class Training:
    losses: list[float]  # per step, mean over micro-batches
    step_logits: list[torch.Tensor]  # per step, whole batch
    params: dict[str, torch.Tensor]  # trained, by the model's parameter names
    device: str


Result = Inference | Step | Training


def micro_batches(batch_size: int, count: int) -> list[slice]:
    """Row slices of ``count`` equal micro-batches; a clear error when they can't be equal."""
    if not isinstance(count, int) or count < 1:
        raise BadInput(f"the micro-batch count must be a positive int, got {count!r}")
    if batch_size % count:
        raise BadInput(f"a batch of {batch_size} rows cannot be split into {count} equal micro-batches")
    size = batch_size // count
    return [slice(i * size, (i + 1) * size) for i in range(count)]


def check_job(job: Job, n_stages: int) -> None:
    """Refuse what the engine would get wrong, before anything runs."""
    if job.mode not in ("infer", "step", "train"):
        raise BadInput(f"a job's mode is 'infer', 'step' or 'train', got {job.mode!r}")
    if not job.batches:
        raise BadInput("a job needs at least one batch")
    if job.mode != "train" and len(job.batches) != 1:
        raise BadInput(f"an {job.mode!r} job takes one batch; several optimizer steps are mode 'train'")
    for b in job.batches:
        check_tensors(b, job.model.config, needs_labels=job.mode != "infer")
    shapes = {tuple(b.input_ids.shape) for b in job.batches}
    if len(shapes) != 1:
        raise BadInput(f"every batch of a job must have one shape (one engine), got {sorted(shapes)}")
    micro_batches(job.batch.input_ids.shape[0], job.n_micro)
    if job.schedule not in (None, "gpipe", "1f1b"):
        raise BadInput(f"a schedule is 'gpipe' or '1f1b', got {job.schedule!r}")
    if job.fault is not None:
        check_fault(job.fault, n_stages, forwards=job.n_micro * len(job.batches))


def prepare(job: Job, n_ranks: int | None = None) -> Job:
    """``job`` with its split points as a tuple, checked; ``n_ranks`` (torchrun's world
    size) fixes the stage count: points are chosen evenly when the job has none."""
    get_rule(job.rule)
    num_layers = count_layers(job.model)
    if job.split_points is None and n_ranks is not None:
        try:
            points = even_split_points(num_layers, n_ranks)
        except ValueError as error:
            raise BadInput(f"torchrun started {n_ranks} ranks, one per stage, but {error}") from None
    else:
        points = check_split_points(job.split_points, num_layers)
    if n_ranks is not None and len(points) + 1 != n_ranks:
        raise BadInput(
            f"the split points {list(points)} cut the model into {len(points) + 1} stages, one rank "
            f"each, but torchrun started {n_ranks} ranks (use --nproc-per-node {len(points) + 1})"
        )
    job = replace(job, split_points=points)
    check_job(job, len(points) + 1)
    return job
