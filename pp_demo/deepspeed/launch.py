"""Start DeepSpeed's ranks: one Python process per stage, each in torchrun's environment.

torchrun would do, but it prints its own report of a rank's non-zero exit (a checker's FAIL is
one), so the processes are started here with the variables torchrun sets: a free port picked
for every start, ``DS_ACCELERATOR=cpu`` and gloo, one thread each. Every start has a deadline:
past it every rank is killed (its whole session: a checker's guard and child too), and the
caller hears one line. Nothing here imports DeepSpeed.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pp_demo.deepspeed import beside_venv, missing
from pp_demo.errors import BadInput
from pp_demo.ranks.launch import PipelineError, free_port

__all__ = ["rank_env", "start_ranks"]


def rank_env(rank: int, world_size: int, port: int, run_id: str, timeout_s: float) -> dict[str, str]:
    """What torchrun sets for a rank of one node, and what DeepSpeed needs to run on the CPU."""
    env = dict(os.environ)
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        TORCHELASTIC_RUN_ID=run_id,
        DS_ACCELERATOR="cpu",
        OMP_NUM_THREADS="1",
        PP_DEMO_TIMEOUT_S=str(timeout_s),
        PP_DEMO_AGENT_PID=str(os.getpid()),  # the ranks' shared parent, for say_once
    )
    if (folder := beside_venv()) is not None:  # on the ranks' path only (pp_demo.deepspeed says why)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH")) if p)
    return env


def start_ranks(
    args: Sequence[str], n_ranks: int, timeout_s: float, folder: str, last_speaks: bool = False
) -> list[int]:
    """Run ``python ARGS`` as ``n_ranks`` ranks, wait for all, return their exit codes.

    Each rank's output goes to ``folder/rankN.log``; with ``last_speaks`` the last rank's goes
    to this process's stdout and stderr (the checker's report). Past ``timeout_s`` every rank is
    killed and ``PipelineError`` says so; on Ctrl-C too, then ``KeyboardInterrupt`` goes on."""
    if (why := missing()) is not None:
        raise BadInput(why)
    port, run_id = free_port(), f"pp_demo-deepspeed-{uuid.uuid4().hex[:8]}"
    processes: list[subprocess.Popen[bytes]] = []
    logs: list[IO[Any]] = []
    try:
        for rank in range(n_ranks):
            speaks = last_speaks and rank == n_ranks - 1
            log = None if speaks else open(Path(folder, f"rank{rank}.log"), "wb")  # noqa: SIM115 (closed below)
            logs += [log] if log else []
            processes.append(
                subprocess.Popen(
                    [sys.executable, *args],
                    env=rank_env(rank, n_ranks, port, run_id, timeout_s),
                    stdout=log,
                    stderr=log,
                    start_new_session=True,  # killed as a group: a rank's own children go with it
                )
            )
        deadline = time.monotonic() + timeout_s
        while any(p.poll() is None for p in processes):
            if time.monotonic() > deadline:
                raise PipelineError(
                    f"the {n_ranks} DeepSpeed ranks did not finish within {timeout_s:g} s; all were stopped"
                )
            if any(p.returncode not in (None, 0) for p in processes) and not last_speaks:
                time.sleep(1)  # a failed rank: its peers stop on their own or are stopped now
                break
            time.sleep(0.1)
        return [p.returncode if p.returncode is not None else -signal.SIGKILL for p in _stopped(processes)]
    finally:
        _stopped(processes)
        for handle in logs:
            handle.close()


def _stopped(processes: list["subprocess.Popen[bytes]"]) -> list["subprocess.Popen[bytes]"]:
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return processes


def failure(folder: str, codes: list[int]) -> PipelineError:
    """One line: the first rank's own cause (its error file), else how it ended."""
    causes = {r: Path(folder, f"rank{r}.error") for r in range(len(codes))}
    for rank, path in causes.items():
        if path.exists():
            return PipelineError(f"DeepSpeed rank {rank} failed: {path.read_text().strip()}")
    rank = next(r for r, code in enumerate(codes) if code != 0)
    log = Path(folder, f"rank{rank}.log")
    text = log.read_text(errors="replace") if log.exists() else ""
    said = [line.strip() for line in text.splitlines() if line.strip()]
    last = f": its last line: {said[-1]}" if said else ""
    return PipelineError(f"DeepSpeed rank {rank} ended with exit status {codes[rank]}{last}")
