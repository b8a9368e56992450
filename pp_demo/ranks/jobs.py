"""What the pipeline runner is asked to do (``Job``) and what it answers, one type per mode:

* ``"infer"`` -> ``Inference``: the last stage's logits for one batch;
* ``"step"`` -> ``Step``: one forward and backward (no optimizer): loss and gradients;
* ``"train"`` -> ``Training``: Adam steps, one per batch, from the model's weights as they
  are: the loss and logits per step, the trained parameters (with ``keep_params_every=k``,
  also after every k-th step).

Every result names its device, so its tolerance can follow it. Jobs, batches and results
hold tensors, so they compare by identity (``eq=False``). Jobs are checked here (``prepare``): the
core's plan of a run (``pp_demo.core.plan_run``) checks the model, the rule, the split points and
the batch once, and the prepared job carries it to the loop in this process or to the ranks.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from torch import nn

from pp_demo.core import FIX, Plan, check_batch, check_split_points, count_layers, integer_tensor, plan_run
from pp_demo.errors import BadInput
from pp_demo.ranks.schedules import get_schedule
from pp_demo.ranks.validate import check_fault

__all__ = [
    "Batch",
    "Fault",
    "Job",
    "TrainingJob",
    "Inference",
    "Step",
    "Training",
    "Result",
    "Mode",
    "Schedule",
    "IGNORED",
    "even_split_points",
    "micro_batch_loss",
    "parameter_copies",
    "check_job",
    "prepare",
]

Mode = Literal["infer", "step", "train"]
Schedule = Literal["gpipe", "1f1b", "interleaved-1f1b"]


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
    """A failure injected on purpose (tests, the notebook): on ``rank`` (= stage; under a looped
    schedule the rank's first stage), at the forward of micro-batch ``at``, ``"raise"`` an
    exception, ``"kill"`` the process or ``"hang"``. ``at`` counts that stage's forwards from 0
    (over every batch of the job); one the job does not reach is refused, and so is a fault for
    ``run(on="process")``, which has no ranks."""

    rank: int
    how: Literal["raise", "kill", "hang"] = "raise"
    at: int = 1


@dataclass(frozen=True, eq=False)
class Job:
    """One run of the pipeline. Build it with ``Job.infer``, ``Job.step`` or ``Job.train``.

    ``schedule`` None means GPipe for inference and 1F1B for training. 1F1B needs at least
    one micro-batch per stage: with fewer, stage 0's warm-up would already be every forward,
    so there is no steady state, and the engine refuses it. The runner then uses GPipe,
    whose gradients are the same (``pp_demo.ranks.schedules.schedule_order`` shows both orders).
    A looped schedule (``"interleaved-1f1b"``) holds several stages per rank
    (``pp_demo.ranks.schedules.SCHEDULES``), for inference too: 4 stages run on 2 ranks.
    """

    model: nn.Module
    batches: tuple[Batch, ...]
    mode: Mode = "infer"
    rule: str = FIX
    split_points: tuple[int, ...] | int | None = None
    n_micro: int = 1
    schedule: Schedule | None = None
    fault: Fault | None = None
    plan: Plan | None = field(default=None, repr=False)  # the core's checked plan, set by ``prepare``

    @classmethod
    def infer(cls, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, **options: Any) -> "Job":
        _no_training_options("infer", options)
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
        _no_training_options("step", options)
        return cls(model, (Batch(input_ids, attention_mask, labels),), "step", **options)

    @classmethod
    def train(
        cls,
        model: nn.Module,
        batches: Iterable[Batch | tuple[torch.Tensor, ...]],
        lr: float = 1e-2,
        keep_params_every: int = 0,
        **options: Any,
    ) -> "TrainingJob":
        """``batches``: ``Batch``s (``pp_demo.training.loop.TrainingBatch`` included) or
        ``(ids, mask, labels)``."""
        rows = tuple(b if isinstance(b, Batch) else Batch(*b) for b in batches)
        return TrainingJob(model, rows, "train", lr=lr, keep_params_every=keep_params_every, **options)

    @property
    def batch(self) -> Batch:
        return self.batches[0]

    @property
    def stages_per_rank(self) -> int:
        """How many of the job's stages each rank holds: 1, or more for a looped schedule."""
        return get_schedule(self.schedule or "gpipe").stages_per_rank

    def schedule_for(self, n_stages: int) -> Schedule:
        """The schedule this job runs on ``n_stages`` stages (see the class docstring)."""
        if self.stages_per_rank > 1:
            return self.schedule or "gpipe"  # the only one that fits its ranks, forwards only too
        if self.mode == "infer":
            return "gpipe"  # forwards only: both schedules run them in the same order
        wanted = self.schedule or "1f1b"
        return "gpipe" if wanted == "1f1b" and self.n_micro < n_stages else wanted


@dataclass(frozen=True, eq=False)
class TrainingJob(Job):
    """A ``"train"`` job (``Job.train``), with training's own options: Adam's learning rate, and every
    how many steps the parameters are also kept (0: never). An inference job carries neither."""

    lr: float = 1e-2
    keep_params_every: int = 0


def _no_training_options(mode: str, options: dict[str, Any]) -> None:
    given = [name for name in ("lr", "keep_params_every") if name in options]
    if given:
        raise BadInput(f"lr and keep_params_every are training options (Job.train): an {mode!r} job takes neither")


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
    params_at: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)  # step -> parameters after it


Result = Inference | Step | Training


def even_split_points(num_layers: int, n_stages: int) -> tuple[int, ...]:
    """Points that cut ``num_layers`` layers into ``n_stages`` stages as evenly as possible."""
    check_split_points(None, num_layers)  # at least 2 layers, else the core's refusal
    if not isinstance(n_stages, int) or not 2 <= n_stages <= num_layers:
        raise BadInput(f"a model with {num_layers} layers splits into 2..{num_layers} stages, got {n_stages!r}")
    return tuple(round(i * num_layers / n_stages) for i in range(1, n_stages))


IGNORED = -100
"""The label of a row left out of the loss (``F.cross_entropy``'s ``ignore_index``)."""


def micro_batch_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The loss of one micro-batch, on every engine: the mean over its rows of each row's
    cross-entropy, a row labelled ``IGNORED`` counting as 0 (left out of the loss but not of
    the count). Every engine divides it by the micro-batch count before the backward, so
    equal micro-batches give the whole batch's mean gradient."""
    return F.cross_entropy(logits, labels, reduction="none").mean()


def parameter_copies(
    model: nn.Module, tensor: Callable[[nn.Parameter], torch.Tensor | None], only: set[int] | None = None
) -> dict[str, torch.Tensor]:
    """``tensor(p)`` (a parameter or its gradient) by parameter name, on the CPU, as a ``Step`` or
    ``Training`` holds it, ``None`` left out. ``only``: the ``id``s of a rank's stage's."""
    named = {n: tensor(p) for n, p in model.named_parameters() if only is None or id(p) in only}
    return {n: t.detach().cpu().clone() for n, t in named.items() if t is not None}


def _check_batches(job: Job) -> None:
    if job.mode not in ("infer", "step", "train"):
        raise BadInput(f"a job's mode is 'infer', 'step' or 'train', got {job.mode!r}")
    if not job.batches:
        raise BadInput("a job needs at least one batch")
    if job.mode != "train" and len(job.batches) != 1:
        raise BadInput(f"an {job.mode!r} job takes one batch; several optimizer steps are mode 'train'")


def check_job(job: Job, n_stages: int) -> None:
    """Refuse what the engine would get wrong, before anything runs (the mode and the batch count,
    then the first batch, the rule, the split points and the micro-batches, by the core's plan, are
    checked first: ``prepare``)."""
    for b in job.batches[1:]:  # a training job's further batches: the core's door of a batch
        check_batch(job.model, b.input_ids, b.attention_mask)
    if job.mode != "infer":
        for b in job.batches:
            check_labels(b, cast(Any, job.model).config.num_labels)
    shapes = {tuple(b.input_ids.shape) for b in job.batches}
    if len(shapes) != 1:
        raise BadInput(f"every batch of a job must have one shape (one engine), got {sorted(shapes)}")
    if (job.mode == "train") != isinstance(job, TrainingJob):
        raise BadInput(f"a training job is built with Job.train (lr, keep_params_every), got an {job.mode!r} job")
    if isinstance(job, TrainingJob):
        keep = job.keep_params_every
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise BadInput(f"keep_params_every is a step count >= 0 (0: never), got {keep!r}")
        if isinstance(job.lr, bool) or not isinstance(job.lr, int | float) or not job.lr > 0:
            raise BadInput(f"lr is Adam's learning rate, a number more than 0, got {job.lr!r}")
    per_rank = job.stages_per_rank  # an unknown schedule is refused here
    # a looped schedule needs a whole number of ranks, and torch's interleaved 1F1B runs its
    # micro-batches in equal rounds (``ScheduleInterleaved1F1B``: m // ranks rounds, at least one,
    # must divide m) or refuses on the ranks
    if per_rank > 1:
        if n_stages % per_rank or n_stages < 2 * per_rank:
            raise BadInput(
                f"{job.schedule} holds {per_rank} stages on each of at least 2 ranks: the model needs "
                f"{2 * per_rank}, {3 * per_rank}, ... stages, got {n_stages}"
            )
        rounds = max(1, job.n_micro // (n_stages // per_rank))
        if job.n_micro % rounds:
            raise BadInput(
                f"{job.schedule} on {n_stages // per_rank} ranks runs {job.n_micro} micro-batches in "
                f"{rounds} equal rounds, which cannot be: use a multiple of {rounds}"
            )
    if job.fault is not None:
        check_fault(job.fault, n_stages // per_rank, forwards=job.n_micro * len(job.batches))


def check_labels(batch: Batch, classes: int) -> None:
    """One integer label per row, on the ids' device, in ``0..classes - 1`` or ``IGNORED``."""
    labels, rows = batch.labels, batch.input_ids.shape[0]
    if labels is None:
        raise BadInput("each training batch needs one label per row")
    labels = integer_tensor(labels, "labels", 1)  # the core's check of the ids, for the labels
    if labels.shape[0] != rows:
        raise BadInput(f"each training batch needs one label per row: {rows} rows, {labels.shape[0]} labels")
    if labels.device != batch.input_ids.device:
        devices = ", ".join(sorted({str(labels.device), str(batch.input_ids.device)}))
        raise BadInput(f"the ids, mask and labels of a batch must be on one device, got {devices}")
    counted = labels[labels != IGNORED]
    if counted.numel() and (int(counted.min()) < 0 or int(counted.max()) >= classes):
        also = f", or {IGNORED} for a row left out of the loss"
        raise BadInput(f"labels must lie in 0..{classes - 1} (num_labels {classes}){also}, got {labels.tolist()}")


def prepare(job: Job, n_ranks: int | None = None) -> Job:
    """``job`` with its split points as a tuple and the core's plan of it, checked once. ``n_ranks``
    (torchrun's world size) fixes the stage count: points are chosen evenly when the job has none
    (a looped schedule's job without points: for 2 ranks)."""
    _check_batches(job)
    per_rank = job.stages_per_rank
    points = job.split_points
    if points is None and (n_ranks is not None or per_rank > 1):
        ranks = n_ranks or 2
        try:
            points = even_split_points(count_layers(job.model), ranks * per_rank)
        except ValueError as error:
            each = "one per stage" if per_rank == 1 else f"{per_rank} stages each"
            started = f"torchrun started {ranks} ranks" if n_ranks is not None else f"{ranks} ranks"
            raise BadInput(f"{started}, {each}, but {error}") from None
    batch = job.batch
    plan = plan_run(job.model, batch.input_ids, batch.attention_mask, job.rule, points, job.n_micro)
    points = plan.split_points
    n_stages = len(points) + 1
    if n_ranks is not None and n_stages != n_ranks * per_rank:
        each = "one rank each" if per_rank == 1 else f"{per_rank} on each rank"
        hint = f" (use --nproc-per-node {n_stages // per_rank})" if n_stages % per_rank == 0 else ""
        raise BadInput(
            f"the split points {list(points)} cut the model into {n_stages} stages, {each}, "
            f"but torchrun started {n_ranks} ranks{hint}"
        )
    job = replace(job, split_points=points, plan=plan)
    check_job(job, n_stages)
    return job
