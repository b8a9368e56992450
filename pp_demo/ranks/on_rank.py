"""What each rank does: where it computes, its stages of the split model, one engine per
shape, one step helper; ``PipelineStage`` moves the hidden states between stages, and every
stage gets the micro-batch's ids and mask from the schedule (``pipeline_step``).

The engine fixes its shapes at a stage's first step and afterwards gives wrong logits, aborts
or returns extra rows for other shapes, so a stage and its schedule are built per shape
(``StageCache``); a batch that does not split evenly is refused earlier. Each rank returns a
plain dict per job (its own stage's gradients or parameters; the logits and losses on the
last rank); ``merge`` makes the job's typed result from them.
"""

import inspect
import os
import signal
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast, runtime_checkable

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining.schedules import get_schedule_class

from pp_demo.core import Plan, split_model
from pp_demo.ranks.jobs import (
    Fault,
    Inference,
    Job,
    Result,
    Step,
    Training,
    TrainingJob,
    micro_batch_loss,
    parameter_copies,
    prepare,
)
from pp_demo.ranks.schedules import get_schedule, stage_ids_of_rank

__all__ = ["backend_and_device", "StageCache", "RankJob", "pipeline_step", "run_on_rank", "merge"]


def backend_and_device(
    rank: int, world_size: int, env: Mapping[str, str] | None = None
) -> tuple[str, torch.device, str | None]:
    """``(backend, device, note)`` for global rank ``rank`` of ``world_size``: NCCL on
    ``cuda:LOCAL_RANK`` when this node has a GPU for each of its ranks; otherwise gloo on the
    CPU, and ``note`` says why in one line when there are GPUs (``None`` otherwise).

    Ranks never share a GPU under NCCL (it refuses two ranks on one device), so with one
    GPU and two ranks the ranks run gloo on the CPU; an in-process run still uses the GPU.
    ``env`` is where ``LOCAL_RANK`` / ``LOCAL_WORLD_SIZE`` are read: ``os.environ`` by default
    (torchrun's ranks, one node or many); spawned ranks pass ``{}``: all on this node. Each
    node decides from its own GPUs, so the nodes of one run need the same number."""
    env = os.environ if env is None else env
    local_size = int(env.get("LOCAL_WORLD_SIZE", world_size))  # unset: one node, the global size
    with warnings.catch_warnings():  # a broken CUDA driver warns when asked: none it is
        warnings.simplefilter("ignore")
        gpus = torch.cuda.device_count()
    cpu = torch.device("cpu")
    counted = "1 GPU" if gpus == 1 else f"{gpus} GPUs"
    if gpus == 0:
        return "gloo", cpu, None
    if not dist.is_nccl_available():
        return "gloo", cpu, f"the ranks use gloo on the CPU: this torch has no NCCL for its {counted}"
    if gpus < local_size:
        why = f"{counted} for {local_size} ranks on this node, and NCCL needs a GPU of its own for each rank"
        return "gloo", cpu, f"the ranks use gloo on the CPU: {why} (in-process runs use the GPU)"
    return "nccl", torch.device("cuda", int(env.get("LOCAL_RANK", rank % local_size))), None


class _Faulty(nn.Module):
    def __init__(self, stage: nn.Module, fault: Fault) -> None:
        super().__init__()
        self.stage, self.fault, self.calls = stage, fault, 0

    def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> Any:
        if self.calls == self.fault.at:
            if self.fault.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.fault.how == "hang":
                time.sleep(24 * 3600)
            raise RuntimeError(f"fault injected at micro-batch {self.fault.at}")
        self.calls += 1
        return self.stage(*args, **kwargs)


class StageCache:
    """This rank's stages and their schedule, one set per job shape: the engine cannot change
    shape. A rank holds one stage, or several under a looped schedule
    (``pp_demo.ranks.schedules.stage_ids_of_rank``: which ones is the registry's business)."""

    def __init__(self, rank: int, world_size: int, device: torch.device, group: Any = None) -> None:
        """``group``: the process group the stages talk over (``None``: the default one)."""
        self.rank, self.world_size, self.device, self.group = rank, world_size, device, group
        self.built: dict[tuple[Any, ...], tuple[Any, nn.Module]] = {}

    def _example_args(
        self, job: Job, shape: Sequence[int], training: bool, stage_id: int, n_stages: int
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """Shapes of one micro-batch in and out of stage ``stage_id``, given up front: the
        engine would otherwise infer them by running the stage on uninitialised tensors,
        where a pooling rule computes an index (or checks a mask) from garbage."""
        rows = shape[0] // job.n_micro
        dtype = next(job.model.parameters()).dtype
        config: Any = job.model.config
        hidden = torch.zeros(rows, shape[1], config.hidden_size, dtype=dtype, device=self.device)
        hidden.requires_grad_(training)  # tells the engine to send its gradient back
        logits = torch.zeros(rows, config.num_labels, dtype=dtype, device=self.device)
        # the first stage's inputs are keyword arguments (the ids and the mask), as every stage's
        inputs: tuple[torch.Tensor, ...] = () if stage_id == 0 else (hidden,)
        outputs = logits if stage_id == n_stages - 1 else hidden
        return inputs, outputs

    def get(self, job: Job, shape: Sequence[int], training: bool) -> tuple[Any, nn.Module]:
        """The schedule and this rank's part of the model: its stage, or a ``ModuleList`` of
        its stages under a looped schedule (what ``train()`` / ``eval()`` is set on)."""
        kind = job.schedule_for(self.world_size * job.stages_per_rank)
        key = (id(job.model), job.rule, job.split_points, job.n_micro, kind, training, tuple(shape), job.fault)
        if key not in self.built:
            spec = get_schedule(kind)
            # a prepared job carries the core's plan; a RankJob's own jobs are prepared here, once per key
            plan = job.plan if job.plan is not None else cast(Plan, prepare(job).plan)
            split = split_model(plan.model, plan.split_points, plan.rule)  # this rank's own copies
            stages: list[Any] = []  # this rank's, in pipeline order
            for k, stage_id in enumerate(stage_ids_of_rank(self.rank, self.world_size, spec.stages_per_rank)):
                module: nn.Module = split[stage_id]
                if k == 0 and job.fault is not None and job.fault.rank == self.rank:
                    module = _Faulty(module, job.fault)
                examples = self._example_args(job, shape, training, stage_id, len(split))
                stages.append(PipelineStage(module, stage_id, len(split), self.device, *examples, group=self.group))
            schedule_class = get_schedule_class(spec.torch_name)  # the engine's own registry
            # each micro-batch's loss divided by the micro-batch count, as the in-process engine and
            # ColossalAI's schedule divide it, so the engine must not divide again: the gradients
            # come out as the whole batch's with no pass over them after the step (the engine's
            # ``scale_grads``, measured at 3-4 ms a step per rank in the benchmark's model), and a
            # parameter that several stages of one rank hold (the token embedding, under a looped
            # schedule) is never divided twice
            loss_fn = (lambda logits, labels: micro_batch_loss(logits, labels) / job.n_micro) if training else None
            looped = spec.stages_per_rank > 1  # the engine's multi-stage schedules take a list of stages
            # torch < 2.7 has no ``scale_grads`` and never divides
            scaling = {"scale_grads": False} if "scale_grads" in inspect.signature(schedule_class).parameters else {}
            schedule = schedule_class(stages if looped else stages[0], job.n_micro, loss_fn=loss_fn, **scaling)
            modules = [stage.submod for stage in stages]
            self.built[key] = schedule, nn.ModuleList(modules) if looped else modules[0]
        return self.built[key]


@runtime_checkable
class RankJob(Protocol):
    """A job that drives the pipeline's steps on each rank itself (``pp_demo.instruments.bench``'s ``BenchJob``,
    ``pp_demo.ranks.engine_probes``): every rank calls its ``run_on_rank`` with the rank's
    ``StageCache``; the last rank's answer is the job's result. Not a ``Job``, never checked or
    prepared: it builds its own ``Job``s on the ranks. Defined here, not in
    ``pp_demo.ranks.jobs``: its signature needs ``StageCache``."""

    @property
    def n_stages(self) -> int:
        """How many ranks ``run`` starts for it (under torchrun, torchrun's world size)."""
        ...

    def run_on_rank(self, rank: int, world_size: int, cache: StageCache, device: torch.device) -> Any: ...


def pipeline_step(
    schedule: Any,
    rank: int,
    world_size: int,
    ids: torch.Tensor,
    mask: torch.Tensor,
    labels: torch.Tensor | None = None,
    losses: list[torch.Tensor] | None = None,
) -> Any:
    """One step of the schedule on this rank, for inference, training and the benchmark
    alike. Every rank hands its stages the batch's ids and mask (the schedule cuts them into
    micro-batches, as ColossalAI's schedule hands each stage the whole micro-batch); only the
    hidden states travel between ranks. The last rank gets the target (when training) and
    returns the logits."""
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
    if rank == world_size - 1 and labels is not None:
        kwargs |= {"target": labels, "losses": losses}
    return schedule.step(**kwargs)


def _run_job(rank: int, world_size: int, job: Job, cache: StageCache, device: torch.device) -> dict[str, Any]:
    job.model.to(device)
    training = job.mode != "infer"
    schedule, module = cache.get(job, job.batch.input_ids.shape, training)
    module.train(training)  # the stage holds copies of the body: set its mode
    # the stage's copy of the body still holds the modules it bypasses (shared with the model,
    # never used here): what this rank owns is what got a gradient
    touched: set[int] = set()
    trains = job if isinstance(job, TrainingJob) else None  # training's options come with a training job
    optimizer = torch.optim.Adam(module.parameters(), lr=trains.lr) if trains is not None else None
    part: dict[str, Any] = {"losses": [], "logits": []}
    for step, batch in enumerate(job.batches, 1):
        rows, rows_mask, labels = [None if t is None else t.to(device).contiguous() for t in batch.as_tuple()]
        assert rows is not None and rows_mask is not None  # a batch always holds both
        job.model.zero_grad(set_to_none=True)
        losses: list[torch.Tensor] = []
        with torch.set_grad_enabled(training):
            out = pipeline_step(schedule, rank, world_size, rows, rows_mask, labels if training else None, losses)
        if rank == world_size - 1:
            part["logits"].append(out.detach().cpu())
            if losses:  # each micro-batch's share of the mean (``StageCache.get``)
                part["losses"].append(float(torch.stack(losses).detach().sum()))
        touched |= {id(p) for p in module.parameters() if p.grad is not None}
        if optimizer is not None:
            optimizer.step()
        if trains is not None and trains.keep_params_every and step % trains.keep_params_every == 0:
            part.setdefault("params_at", {})[step] = parameter_copies(job.model, lambda p: p, touched)
    if job.mode == "step":
        part["grads"] = parameter_copies(job.model, lambda p: p.grad, touched)
    if job.mode == "train":
        part["params"] = parameter_copies(job.model, lambda p: p, touched)
    return part


def run_on_rank(rank: int, world_size: int, jobs: Sequence[Job | RankJob], device: torch.device) -> list[Any]:
    """Run every job on this rank (the process group is up): one part per job."""
    cache = StageCache(rank, world_size, device)
    return [
        job.run_on_rank(rank, world_size, cache, device)
        if isinstance(job, RankJob)
        else _run_job(rank, world_size, job, cache, device)
        for job in jobs
    ]


def _joined(parts: list[Any], key: str | int) -> dict[str, torch.Tensor]:
    """Every rank's tensors under ``key``, by parameter name: each rank sends its own stage's."""
    return {name: tensor for part in parts for name, tensor in part[key].items()}


def merge(job: Job | RankJob, parts: list[Any], device: str) -> Result:
    """The job's result from every rank's part (rank order)."""
    if isinstance(job, RankJob):
        return cast(Result, parts[-1])
    last = parts[-1]
    if job.mode == "infer":
        return Inference(last["logits"][0], device)
    if job.mode == "step":
        return Step(last["logits"][0], last["losses"][0], _joined(parts, "grads"), device)
    params_at = {step: _joined([p["params_at"] for p in parts], step) for step in last.get("params_at", {})}
    return Training(last["losses"], last["logits"], _joined(parts, "params"), device, params_at)
