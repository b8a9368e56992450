"""Start the ranks of a pipeline, one per stage: spawned from Python or a notebook (``spawn_ranks``:
the worker lives in this package, since a function defined in a notebook cannot be spawned, and
only the caller prints), or torchrun's (``join_torchrun``: this process is one of them already).

Both are the back ends of ``pp_demo.ranks.runner.run``, the one way in. Backend: NCCL when the
node has a GPU per rank, else gloo on the CPU (``pp_demo.ranks.on_rank.backend_and_device``;
``ranks_placement`` says which, and why, before a run). What each rank does is in ``on_rank``.
"""

import logging
import multiprocessing
import os
import signal
import socket
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from pp_demo.ranks.jobs import Job
from pp_demo.ranks.on_rank import RankJob, backend_and_device, run_on_rank
from pp_demo.ranks.torchrun_env import is_torchrun_rank, port_taken, torchrun_world_size

__all__ = [
    "PipelineError",
    "prepare_fork_server",
    "spawn_ranks",
    "ranks_placement",
    "join_torchrun",
    "free_port",
]


class PipelineError(RuntimeError):
    """A rank failed, died or hung; the message says which and how."""


def _spawned_rank(rank: int, world_size: int, init_method: str, out_dir: str, timeout_s: float) -> None:
    torch.set_num_threads(1)  # torchrun does this; a started process does not
    # the jobs come through a file, not as arguments: as arguments, every tensor would travel as its
    # own file descriptor, and a few models exceed what one message to the fork server may carry
    jobs = torch.load(os.path.join(out_dir, "jobs.pt"), weights_only=False)
    backend, device, _ = backend_and_device(rank, world_size, env={})  # spawned: all on this node
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend, init_method=init_method, rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout_s)
    )
    try:
        torch.save(run_on_rank(rank, world_size, jobs, device), os.path.join(out_dir, f"rank{rank}.pt"))
    except BaseException as error:
        # leave the cause for the caller (``_failure`` says why)
        cause = error
        while cause.__cause__ is not None:  # the engine wraps stage errors in its own
            cause = cause.__cause__
        written = Path(out_dir, f"rank{rank}.error.tmp")
        written.write_text(f"{type(cause).__name__}: {' '.join(str(cause).split())}")
        written.replace(written.with_suffix(""))  # whole or absent: the caller may read it any moment
        raise
    finally:
        dist.destroy_process_group()


# Ranks start from a fork server that has already imported torch, its pipelining engine and
# transformers (seconds of imports per rank): the first start pays for them once, each later start
# of the same session forks in a fraction of a second. Unlike a plain fork, the server is a fresh
# single-threaded process, not the caller (a notebook kernel with threads). Windows has no fork
# server: each start spawns fresh interpreters.
_START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
# the first one makes the server (and the ranks it forks) ignore Ctrl-C: the caller stops them
_PRELOAD = ["pp_demo.ranks.fork_server_signals", "pp_demo.ranks.on_rank", "pp_demo.core"]
_PRELOAD += ["transformers"]


def prepare_fork_server() -> None:
    """What the fork server imports when it first starts (any later start of this session
    reuses it): call before anything in this process starts a forkserver process."""
    multiprocessing.set_forkserver_preload(_PRELOAD)


def free_port() -> int:
    """A port the system has just found free, so runs started side by side never collide."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_PEER_LOST = ("Connection reset by peer", "Connection closed by peer", "Broken pipe", "Socket closed")


def _failure(error: Any, out_dir: str, processes: Sequence[Any]) -> PipelineError:
    """One clear sentence: which rank failed first and how. The first failure the caller
    hears of may be another rank's, which only saw its peer disappear, so each rank's
    own account (its error file, or the signal that ended it) is weighed: a real error
    first, then a death by a signal, and a lost peer only when nothing else is known."""
    files = {rank: Path(out_dir, f"rank{rank}.error") for rank in range(len(processes))}
    causes = {rank: f.read_text().strip().splitlines()[0].strip() for rank, f in files.items() if f.exists()}
    others = "the other rank was stopped" if len(processes) == 2 else "the other ranks were stopped"
    lost_peer = {r for r, c in causes.items() if any(p in c for p in _PEER_LOST)}
    for rank, cause in sorted(causes.items()):
        if rank not in lost_peer:
            return PipelineError(f"rank {rank} failed: {port_taken(cause) or cause}; {others}")
    for rank, process in enumerate(processes):
        code = process.exitcode
        # SIGTERM is how torch stops the surviving ranks: not a cause
        if rank not in causes and code is not None and code < 0 and -code != signal.SIGTERM:
            return PipelineError(f"rank {rank} was killed by {signal.Signals(-code).name} mid-schedule; {others}")
    if causes:
        return PipelineError(f"rank {min(causes)} failed: lost its connection to another rank; {others}")
    last = str(error).strip().splitlines()[-1]
    return PipelineError(f"rank {error.error_index} failed: {port_taken(last) or last}")


def spawn_ranks(jobs: Sequence[Job | RankJob], n_ranks: int, timeout_s: float = 120) -> list[list[Any]]:
    """Start ``n_ranks`` ranks once, run every (checked) job, return each rank's parts.

    Raises ``PipelineError`` if a rank raises, dies, or the whole run takes longer
    than ``timeout_s`` (the surviving ranks are stopped, never left hanging).
    """
    with tempfile.TemporaryDirectory(prefix="pp_demo_") as out_dir:
        torch.save(list(jobs), os.path.join(out_dir, "jobs.pt"))
        prepare_fork_server()
        init_method = f"tcp://127.0.0.1:{free_port()}"
        context = mp.start_processes(
            _spawned_rank,
            args=(n_ranks, init_method, out_dir, timeout_s),
            nprocs=n_ranks,
            join=False,
            start_method=_START_METHOD,
        )
        deadline = time.monotonic() + timeout_s
        # torch logs each process it terminates after a failure, with its pid: the
        # PipelineError below says what happened, without machine details
        spawn_log = logging.getLogger("torch.multiprocessing.spawn")
        spawn_level, spawn_log.level = spawn_log.level, logging.ERROR
        try:
            while not context.join(timeout=0.2):
                if time.monotonic() > deadline:
                    raise PipelineError(f"the {n_ranks} ranks did not finish within {timeout_s} s; all were stopped")
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as error:
            raise _failure(error, out_dir, context.processes) from None
        finally:
            spawn_log.setLevel(spawn_level)
            for process in context.processes:
                if process.is_alive():
                    process.kill()
                    process.join()
        return [torch.load(os.path.join(out_dir, f"rank{r}.pt"), weights_only=False) for r in range(n_ranks)]


def ranks_placement(n_ranks: int) -> tuple[str, torch.device, str | None]:
    """Backend, device and note (``backend_and_device``) of the ranks a run would start here,
    or, under torchrun, of this rank: what the caller can say before or after the run."""
    if is_torchrun_rank():
        return backend_and_device(int(os.environ["RANK"]), n_ranks)
    return backend_and_device(0, n_ranks, env={})


def join_torchrun(jobs: Sequence[Job | RankJob], timeout_s: float = 120) -> list[list[Any]] | None:
    """This process is one of torchrun's ranks: join the group, run the (checked) jobs,
    gather every rank's parts on the last rank. ``None`` on the other ranks."""
    rank, world_size = int(os.environ["RANK"]), torchrun_world_size()
    backend, device, _ = backend_and_device(rank, world_size)  # LOCAL_RANK, LOCAL_WORLD_SIZE
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    try:
        parts = run_on_rank(rank, world_size, jobs, device)
        gathered: list[Any] | None = [None] * world_size if rank == world_size - 1 else None
        dist.gather_object(parts, gathered, dst=world_size - 1)
    finally:
        dist.destroy_process_group()
    return gathered
