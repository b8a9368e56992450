"""Start the two ranks of the pipeline, from Python, a notebook or torchrun.

* ``run_distributed(jobs)`` from Python or a notebook: spawns two processes (the worker
  lives in this package, since a function defined in a notebook cannot be spawned),
  runs all the jobs in that one start, and returns the last stage's results to the
  caller. A rank that raises, dies or hangs becomes a ``PipelineError`` in the caller
  within ``timeout_s``; only the caller prints.
* ``torchrun --nproc-per-node 2 -m pp_demo reproduce --distributed``: each process is a
  rank already; ``run_under_torchrun`` joins the group and runs the jobs.

Backend: NCCL when there are at least two GPUs (one per rank), else gloo on the CPU.
What each rank does is in ``pp_demo.ranks``.
"""

import logging
import multiprocessing
import os
import signal
import socket
import tempfile
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from .local import micro_batches
from .ranks import WORLD_SIZE, Fault, Job, JobResult, TrainJob, backend_and_device, run_jobs
from .stages import split_model

__all__ = ["Fault", "Job", "TrainJob", "JobResult", "PipelineError", "run_two_ranks", "WORLD_SIZE", "run_distributed",
           "launched_by_torchrun", "check_world_size", "run_under_torchrun"]


class PipelineError(RuntimeError):
    """A rank failed, died or hung; the message says which and how."""

def _spawned_rank(rank, init_method, out_dir, timeout_s):
    torch.set_num_threads(1)  # torchrun does this; a started process does not
    # the jobs come through a file, not as arguments: passed as arguments, every tensor
    # would travel as its own file descriptor, and a few models exceed what one message
    # to the fork server may carry
    jobs = torch.load(os.path.join(out_dir, "jobs.pt"), weights_only=False)
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
        path = os.path.join(out_dir, f"rank{rank}.error")
        with open(path + ".tmp", "w") as f:
            f.write(f"{type(cause).__name__}: {' '.join(str(cause).split())}")
        os.replace(path + ".tmp", path)  # whole or absent: the caller may read it any moment
        raise
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------------ the caller

# Ranks start from a fork server that has already imported torch, its pipelining engine and
# transformers (seconds of imports per rank): the first start pays for them once, each later
# start of the same session forks in a fraction of a second. Unlike a plain fork, the server
# is a fresh single-threaded process, not the caller (a notebook kernel with threads).
# (Windows has no fork server: there each start spawns fresh interpreters.)
_START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
_PRELOAD = ["pp_demo.ranks", "pp_demo.families", "transformers"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check_batch(ids, mask, n_micro):
    micro_batches(ids.shape[0], n_micro)
    if mask is None or mask.shape != ids.shape:
        raise ValueError("each job needs an attention_mask of the shape of its input_ids "
                         "(None cannot travel between ranks)")


def _check(job):
    """Refuse what the engine would get wrong, before any process starts."""
    if hasattr(job, "run_on_rank"):
        return
    if isinstance(job, TrainJob):
        if not job.batches:
            raise ValueError("a TrainJob needs at least one batch")
        shapes = {tuple(ids.shape) for ids, _, _ in job.batches}
        if len(shapes) != 1:
            raise ValueError(f"every batch of a TrainJob must have one shape (one engine), got {sorted(shapes)}")
        for ids, mask, labels in job.batches:
            _check_batch(ids, mask, job.n_micro)
            if labels is None or labels.shape != ids.shape[:1]:
                raise ValueError("each training batch needs one label per row")
    else:
        _check_batch(job.input_ids, job.attention_mask, job.n_micro)
    split_model(job.model, job.split_at, job.rule)  # family, split point and rule are valid
    if job.fault is not None and (job.fault.rank not in range(WORLD_SIZE) or job.fault.how not in ("raise", "kill", "hang")):
        raise ValueError(f"a fault needs rank 0 or 1 and how 'raise', 'kill' or 'hang', got {job.fault}")


def _merge(per_rank):
    merged = []
    for first, last in zip(*per_rank):
        merged.append(JobResult(last.logits, last.loss, {**first.grads, **last.grads}, last.losses,
                                last.step_logits, {**first.params, **last.params}, last.timings))
    return merged


_PEER_LOST = ("Connection reset by peer", "Connection closed by peer", "Broken pipe", "Socket closed")


def _failure(error, out_dir, processes):
    """One clear sentence: which rank failed first and how. The first failure the caller
    hears of may be the *other* rank's, which only saw its peer disappear, so each rank's
    own account (its error file, or the signal that ended it) is weighed: a real error
    first, then a death by a signal, and a lost peer only when nothing else is known."""
    causes = {}
    for rank in range(WORLD_SIZE):
        path = os.path.join(out_dir, f"rank{rank}.error")
        if os.path.exists(path):
            with open(path) as f:
                causes[rank] = f.read().strip().splitlines()[0].strip()
    lost_peer = {r for r, c in causes.items() if any(p in c for p in _PEER_LOST)}
    for rank, cause in causes.items():
        if rank not in lost_peer:
            return PipelineError(f"rank {rank} failed: {cause}; the other rank was stopped")
    for rank, process in enumerate(processes):
        code = process.exitcode
        # SIGTERM is how torch stops the surviving rank: not a cause
        if rank not in causes and code is not None and code < 0 and -code != signal.SIGTERM:
            return PipelineError(f"rank {rank} was killed by {signal.Signals(-code).name} mid-schedule; "
                                 "the other rank was stopped")
    if causes:
        return PipelineError(f"rank {min(causes)} failed: lost its connection to the other rank; "
                             "the other rank was stopped")
    return PipelineError(f"rank {error.error_index} failed: {str(error).strip().splitlines()[-1]}")


def run_distributed(jobs, timeout_s=120):
    """Start two ranks once, run every job, return one ``JobResult`` per job.

    Raises ``PipelineError`` if a rank raises, dies, or the whole run takes longer
    than ``timeout_s`` (the surviving rank is stopped, never left hanging).
    """
    jobs = list(jobs)
    for job in jobs:
        _check(job)
    with tempfile.TemporaryDirectory(prefix="pp_demo_") as out_dir:
        torch.save(jobs, os.path.join(out_dir, "jobs.pt"))
        multiprocessing.set_forkserver_preload(_PRELOAD)  # read when the server first starts
        init_method = f"tcp://127.0.0.1:{_free_port()}"
        context = mp.start_processes(_spawned_rank, args=(init_method, out_dir, timeout_s),
                                     nprocs=WORLD_SIZE, join=False, start_method=_START_METHOD)
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
            raise _failure(error, out_dir, context.processes) from None
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


def run_two_ranks(jobs, timeout_s=120):
    """Run the jobs on two ranks however this process was started: as one of torchrun's
    ranks (``None`` on the first rank, which holds no logits), or by spawning them here."""
    return run_under_torchrun(jobs, timeout_s) if launched_by_torchrun() else run_distributed(jobs, timeout_s)
