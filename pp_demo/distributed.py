"""The same two stages as two real ranks on ``torch.distributed.pipelining``.

Rank 0 holds the first stage, rank 1 the last; ``PipelineStage`` moves the hidden
states, ``input_ids`` and the mask between them; ``ScheduleGPipe`` runs inference and
``Schedule1F1B`` a training step. Backend: NCCL when there are at least two GPUs (one
per rank), else gloo on the CPU.

Two ways to start the ranks:

* ``run_distributed(jobs)`` from Python or a notebook: spawns two processes (the worker
  lives here, since a function defined in a notebook cannot be spawned), runs all the
  jobs in that one start, and returns the last stage's results to the caller. A rank
  that raises, dies or hangs becomes a ``PipelineError`` in the caller within
  ``timeout_s``; only the caller prints.
* ``torchrun --nproc-per-node 2 -m pp_demo reproduce --distributed``: each process is a
  rank already; ``run_jobs`` is called directly (``pp_demo.cli``).

The engine fixes its shapes at a stage's first step and afterwards gives wrong logits,
aborts or returns extra rows for other shapes. So a stage and its schedule are built
per shape (``_StageCache``), and a batch that does not split evenly is refused.
"""

import logging
import os
import signal
import socket
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

from .local import micro_batches
from .rules import FIX
from .stages import split_model

__all__ = ["Fault", "Job", "JobResult", "PipelineError", "WORLD_SIZE", "run_distributed", "run_jobs",
           "backend_and_device", "launched_by_torchrun", "run_under_torchrun"]

WORLD_SIZE = 2


class PipelineError(RuntimeError):
    """A rank failed, died or hung; the message says which and how."""


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
class JobResult:
    logits: torch.Tensor | None = None            # last stage's output, whole batch
    loss: float | None = None                     # mean over micro-batches (training)
    grads: dict[str, torch.Tensor] = field(default_factory=dict)  # by the model's parameter names


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

    def _example_args(self, job):
        """Shapes of one micro-batch in and out of this rank's stage, given up front: the
        engine would otherwise infer them by running the stage on uninitialised tensors,
        where a pooling rule computes an index (or checks a mask) from garbage."""
        rows = job.input_ids.shape[0] // job.n_micro
        ids = torch.zeros(rows, job.input_ids.shape[1], dtype=job.input_ids.dtype, device=self.device)
        mask = torch.zeros_like(ids, dtype=job.attention_mask.dtype)
        dtype = next(job.model.parameters()).dtype
        hidden = torch.zeros(*ids.shape, job.model.config.hidden_size, dtype=dtype, device=self.device)
        hidden.requires_grad_(job.labels is not None)  # tells the engine to send its gradient back
        logits = torch.zeros(rows, job.model.config.num_labels, dtype=dtype, device=self.device)
        return ((ids, mask), (hidden, ids, mask)) if self.rank == 0 else ((hidden, ids, mask), logits)

    def get(self, job):
        training = job.labels is not None
        key = (id(job.model), job.rule, job.split_at, job.n_micro, training, tuple(job.input_ids.shape), job.fault)
        if key not in self.built:
            module = split_model(job.model, job.split_at, job.rule)[self.rank]
            if job.fault is not None and job.fault.rank == self.rank:
                module = _Faulty(module, job.fault)
            stage = PipelineStage(module, self.rank, WORLD_SIZE, self.device, *self._example_args(job))
            schedule = (Schedule1F1B(stage, job.n_micro, loss_fn=_loss) if training
                        else ScheduleGPipe(stage, job.n_micro))
            self.built[key] = schedule, module
        return self.built[key]


def _grads_by_name(model):
    return {name: p.grad.detach().cpu().clone() for name, p in model.named_parameters() if p.grad is not None}


def run_jobs(rank, jobs, device):
    """Run every job on this rank (the process group is up); results matter on the last rank."""
    cache, results = _StageCache(rank, device), []
    for job in jobs:
        job.model.to(device)
        schedule, module = cache.get(job)
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


def _spawned_rank(rank, init_method, jobs, out_dir, timeout_s):
    torch.set_num_threads(1)  # torchrun does this; spawn does not
    backend, device = backend_and_device(rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=WORLD_SIZE,
                            timeout=timedelta(seconds=timeout_s))
    try:
        torch.save(run_jobs(rank, jobs, device), os.path.join(out_dir, f"rank{rank}.pt"))
    except BaseException as error:
        # leave the cause for the caller: the exception that reaches it first is often
        # the *other* rank's, which only saw its peer disappear
        cause = error
        while cause.__cause__ is not None:  # the engine wraps stage errors in its own
            cause = cause.__cause__
        with open(os.path.join(out_dir, f"rank{rank}.error"), "w") as f:
            f.write(f"{type(cause).__name__}: {' '.join(str(cause).split())}")
        raise
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------------ the caller

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(job):
    """Refuse what the engine would get wrong, before any process starts."""
    micro_batches(job.input_ids.shape[0], job.n_micro)
    if job.attention_mask is None or job.attention_mask.shape != job.input_ids.shape:
        raise ValueError("each job needs an attention_mask of the shape of its input_ids "
                         "(None cannot travel between ranks)")
    split_model(job.model, job.split_at, job.rule)  # family, split point and rule are valid
    if job.fault is not None and (job.fault.rank not in range(WORLD_SIZE) or job.fault.how not in ("raise", "kill", "hang")):
        raise ValueError(f"a fault needs rank 0 or 1 and how 'raise', 'kill' or 'hang', got {job.fault}")


def _merge(per_rank):
    merged = []
    for first, last in zip(*per_rank):
        merged.append(JobResult(last.logits, last.loss, {**first.grads, **last.grads}))
    return merged


_PEER_LOST = ("Connection reset by peer", "Connection closed by peer", "Broken pipe", "Socket closed")


def _failure(error, out_dir):
    """One clear sentence: which rank failed first and how, the other rank's fate after it."""
    causes = {}
    for rank in range(WORLD_SIZE):
        path = os.path.join(out_dir, f"rank{rank}.error")
        if os.path.exists(path):
            with open(path) as f:
                causes[rank] = f.read().strip().splitlines()[0].strip()
    lost_peer = {r for r, c in causes.items() if any(p in c for p in _PEER_LOST)}
    if isinstance(error, mp.ProcessExitedException) and error.error_index not in causes:
        how = f"was killed by {error.signal_name}" if error.signal_name else f"exited with code {error.exit_code}"
        return PipelineError(f"rank {error.error_index} {how} mid-schedule; the other rank was stopped")
    root = [r for r in causes if r not in lost_peer] or sorted(causes) or [error.error_index]
    rank = root[0]
    cause = causes.get(rank, str(error).strip().splitlines()[-1])
    if rank in lost_peer:
        cause = "lost its connection to the other rank"
    return PipelineError(f"rank {rank} failed: {cause}; the other rank was stopped")


def run_distributed(jobs, timeout_s=120):
    """Start two ranks once, run every job, return one ``JobResult`` per job.

    Raises ``PipelineError`` if a rank raises, dies, or the whole run takes longer
    than ``timeout_s`` (the surviving rank is stopped, never left hanging).
    """
    jobs = list(jobs)
    for job in jobs:
        _check(job)
    with tempfile.TemporaryDirectory(prefix="pp_demo_") as out_dir:
        init_method = f"tcp://127.0.0.1:{_free_port()}"
        context = mp.start_processes(_spawned_rank, args=(init_method, jobs, out_dir, timeout_s),
                                     nprocs=WORLD_SIZE, join=False, start_method="spawn")
        deadline = time.monotonic() + timeout_s
        # torch logs each process it terminates after a failure, with its pid: the
        # PipelineError below says what happened, without machine details
        spawn_log = logging.getLogger("torch.multiprocessing.spawn")
        spawn_level, spawn_log.level = spawn_log.level, logging.ERROR
        try:
            while not context.join(timeout=0.2):
                if time.monotonic() > deadline:
                    raise PipelineError(f"the two ranks did not finish within {timeout_s} s; both were stopped")
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as error:
            raise _failure(error, out_dir) from None
        finally:
            spawn_log.setLevel(spawn_level)
            for process in context.processes:
                if process.is_alive():
                    process.kill()
                    process.join()
        per_rank = [torch.load(os.path.join(out_dir, f"rank{r}.pt"), weights_only=False) for r in range(WORLD_SIZE)]
    return _merge(per_rank)


# ------------------------------------------------------------------ under torchrun

def launched_by_torchrun():
    return "TORCHELASTIC_RUN_ID" in os.environ and "RANK" in os.environ


def check_world_size(world_size):
    if world_size != WORLD_SIZE:
        raise ValueError(f"the pipeline has two stages and needs exactly 2 ranks, got {world_size} "
                         "(torchrun --nproc-per-node 2)")


def run_under_torchrun(jobs, timeout_s=120):
    """This process is one of torchrun's ranks: join the group, run the jobs. Returns
    the results on the last rank (which holds the logits) and ``None`` on the other."""
    check_world_size(int(os.environ["WORLD_SIZE"]))
    jobs = list(jobs)
    for job in jobs:
        _check(job)
    rank = int(os.environ["RANK"])
    backend, device = backend_and_device(rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    try:
        results = run_jobs(rank, jobs, device)
    finally:
        dist.destroy_process_group()
    return results if rank == WORLD_SIZE - 1 else None
