"""The bug on ColossalAI's own pipeline engine: ``HybridParallelPlugin(pp_size=2)`` on two ranks.

notebook 06 and ``verify-pr`` call ColossalAI's pipeline *forwards* as one stage in one process; a
ColossalAI user runs the plugin (``Booster.boost``, ``booster.execute_pipeline``, a process per
stage), as ``run_engine(tree, cases)`` does on two ranks (gloo on the CPU by default) for one tree:
the installed package (``tree=None``) or a ``verify-pr`` variant of the 0.5.0 sdist
(``pull_request.sdists``). A process imports one tree, so the ranks start once per tree for all its
cases (``engine.worker``), and each run proves which tree it imported by ``colossalai.__file__``.

Never a hang: the ranks get ``start_timeout_s`` to import and join, then ``case_timeout_s`` per
case; a rank that hangs, dies or raises ends the run with a one-line ``failure`` (earlier cases'
records are kept) and both ranks are stopped.
"""

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from pp_demo.core import REVIEW_TABLE, as_batch
from pp_demo.errors import BadInput
from pp_demo.instruments.pull_request.sdists import CHANGE_FILES, FOLLOW_UP_FILES
from pp_demo.ranks.launch import free_port
from pp_demo.records.engine import case_name
from pp_demo.verify.compare import REPRO_ROWS

__all__ = ["PP_STYLES", "MODES", "NOT_INTERLEAVED", "batch_of", "engine_cases", "not_run", "run_engine"]
__all__ += ["PACKAGE_PARENT", "start_python"]

# the folder pp_demo is imported from (a checkout or site-packages): the processes it starts import it from there
PACKAGE_PARENT = pathlib.Path(__file__).resolve().parents[3]
PP_STYLES = ("1f1b", "interleaved")  # HybridParallelPlugin's pp_style, not pipeline.schedules' names
MODES = ("inference", "training")
Case = dict[str, Any]
# Two micro-batches per batch: training on two stages needs at least two (1F1B's load_batch
# asserts it), and the interleaved schedule on two stages hangs with four, even with
# overlap_p2p=False (measured: docs/colossalai-interleaved-hang.md).
MICRO_BATCHES = 2

# Measured on ColossalAI 0.5.0 with pp_style="interleaved" (docs/colossalai.md shows the runs):
# these families' policies cannot run the interleaved schedule, with any tree, on any device.
_NO_STAGE_INDICES = (
    "its policy never sets stage_manager.stage_indices, which the interleaved schedule reads "
    "(AttributeError at pipeline/schedule/interleaved_pp.py:314)"
)
NOT_INTERLEAVED = {
    "opt": "its policy asks is_last_stage() without ignore_chunk while boosting (AssertionError at "
    "shardformer/policies/opt.py:463 -> pipeline/stage_manager.py:135)",
    "bloom": _NO_STAGE_INDICES,
    "falcon": _NO_STAGE_INDICES,
    "gptj": _NO_STAGE_INDICES,
}


def batch_of(family: str) -> tuple[Any, Any]:
    """The batch a family runs on: the reproduction's left- and right-padded rows for the
    families that count non-pad ids, the review table's four rows (pad == eos inside two of
    them) for the first-pad families."""
    if family not in CHANGE_FILES + FOLLOW_UP_FILES:
        raise BadInput(f"{family} has no ColossalAI 0.5.0 pipeline forward with the bug")
    return as_batch(REPRO_ROWS if family in CHANGE_FILES else REVIEW_TABLE)


def engine_cases(
    families: Iterable[str],
    schedules: Iterable[str] = PP_STYLES,
    modes: Iterable[str] = MODES,
    also_not_run: bool = False,
) -> list[Case]:
    """One case per family x schedule x mode, with its batch, as the worker reads it; none for
    a family the schedule cannot run (``not_run`` says why), unless ``also_not_run`` (to see it fail)."""
    cases = []
    for family in families:
        ids, mask = batch_of(family)
        batch = {
            "input_ids": ids.tolist(),
            "attention_mask": mask.tolist(),
            "microbatch_size": len(ids) // MICRO_BATCHES,
        }
        for schedule in schedules:
            if not not_run(family, schedule) or also_not_run:
                cases += [{"family": family, "schedule": schedule, "mode": mode, **batch} for mode in modes]
    return cases


def not_run(family: str, schedule: str) -> str | None:
    """Why ColossalAI 0.5.0 cannot run ``family`` with ``schedule``; ``None`` when it can."""
    return NOT_INTERLEAVED.get(family) if schedule == "interleaved" else None


def start_python(
    module: str, tree: pathlib.Path | None, *args: str, env: dict[str, str] | None = None, **popen: Any
) -> Any:
    """``python -m MODULE ARGS`` with ``tree`` (a ColossalAI tree) first on ``PYTHONPATH``, then
    this pp_demo (not another one installed): the process imports that colossalai. The engine's
    ranks and verify-pr's workers start this way."""
    path = [str(tree)] if tree else []
    environment = dict(os.environ, **(env or {}), PYTHONPATH=os.pathsep.join([*path, str(PACKAGE_PARENT)]))
    return subprocess.Popen([sys.executable, "-m", module, *args], env=environment, **popen)


def start_ranks(
    tree: pathlib.Path | None,
    job: pathlib.Path,
    folder: pathlib.Path,
    world: int,
    module: str = "pp_demo.instruments.engine.worker",
) -> list[Any]:
    """``world`` processes running ``python -m module JOB FOLDER``, each rank's output in a log."""
    env = dict(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(world), OMP_NUM_THREADS="1")
    processes = []
    for rank in range(world):
        with open(folder / f"rank{rank}.log", "w") as log:  # the process writes to its own copy
            rank_env = dict(env, RANK=str(rank), LOCAL_RANK=str(rank))
            processes.append(
                start_python(module, tree, str(job), str(folder), env=rank_env, stdout=log, stderr=subprocess.STDOUT)
            )
    return processes


def _read(path: pathlib.Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


# what a rank says when its peer died first: not a cause
_PEER_LOST = ("Connection", "Broken pipe", "Socket closed")


def _died(processes: list[Any], folder: pathlib.Path, doing: str) -> str | None:
    """The first rank that failed, as one line; None while every rank is alive or done well."""
    for rank, process in enumerate(processes):
        code = process.poll()
        error = _read(folder / f"error{rank}.json")
        if error and not any(phrase in error for phrase in _PEER_LOST):
            return f"rank {rank} failed {doing}: {error}"
        if code is not None and code < 0:
            return f"rank {rank} was killed by {signal.Signals(-code).name} {doing}"
    for rank, process in enumerate(processes):
        if process.poll() not in (None, 0):
            error = _read(folder / f"error{rank}.json") or f"exit status {process.poll()}"
            return f"rank {rank} failed {doing}: {error}"
    return None


def _where_stuck(processes: list[Any], folder: pathlib.Path) -> str:
    """Per live rank, the innermost ColossalAI line of its stack (faulthandler on SIGUSR1)."""
    live = [r for r, p in enumerate(processes) if p.poll() is None]
    for rank in live:
        processes[rank].send_signal(signal.SIGUSR1)
    time.sleep(1.0)
    where = []
    for rank in live:
        stack = folder / f"stack{rank}.txt"
        frames = re.findall(r'File "([^"]+)", line (\d+) in (\w+)', stack.read_text() if stack.exists() else "")
        # ColossalAI's own frames, not those of this package's pp_demo/colossalai/
        ours = str(PACKAGE_PARENT / "pp_demo")
        theirs = [(p.rsplit("/colossalai/", 1)[1], n, f) for p, n, f in frames if "/colossalai/" in p and ours not in p]
        if theirs:  # faulthandler lists the innermost frame first
            path, line, function = theirs[0]
            where.append(f"rank {rank} in {function} ({path}:{line})")
    return "; ".join(where)


def stop_ranks(processes: list[Any]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


def run_engine(
    tree: pathlib.Path | None,
    cases: list[Case],
    dtype: str = "fp32",
    backend: str = "gloo",
    start_timeout_s: float = 180,
    case_timeout_s: float = 60,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``{"colossalai.__file__ inside the tree", "records", "failure"}`` for one tree's cases.

    ``records`` holds one record per finished case (see ``engine.worker``), ``failure`` the line
    that says which rank hung, died or failed in which case (``None`` when all finished).
    """
    with tempfile.TemporaryDirectory(prefix="pp_demo_engine_") as name:
        folder = pathlib.Path(name)
        job = folder / "job.json"
        job.write_text(json.dumps({"cases": cases, "dtype": dtype, "backend": backend, "timeout_s": case_timeout_s}))
        processes = start_ranks(tree, job, folder, 2)  # the plugin's two stages
        try:
            records, failure = _watch(processes, folder, cases, start_timeout_s, case_timeout_s, progress)
        finally:
            stop_ranks(processes)
        imported = (_read(folder / "ready0.json") or {}).get("colossalai.__file__")
    inside = None
    if imported is not None:
        inside = pathlib.Path(imported).is_relative_to(tree.resolve()) if tree else "site-packages" in imported
    return {"colossalai.__file__ inside the tree": inside, "records": records, "failure": failure}


def _watch(
    processes: list[Any],
    folder: pathlib.Path,
    cases: list[Case],
    start_timeout_s: float,
    case_timeout_s: float,
    progress: Callable[[str], None] | None,
) -> tuple[list[Case], str | None]:
    """The ranks' records as they write them, and the failure that ended the run (``None``: none)."""
    records: list[Case] = []
    deadline = time.monotonic() + start_timeout_s
    while len(records) < len(cases):
        record = _read(folder / f"case{len(records)}.json")
        if record is not None:
            records.append(record)
            deadline = time.monotonic() + case_timeout_s
            if progress:
                progress(f"[{len(records)}/{len(cases)}] {case_name(record)}: done")
            continue
        ready = all((folder / f"ready{r}.json").exists() for r in range(len(processes)))
        what = f"case {case_name(cases[len(records)])}" if ready else "importing ColossalAI and joining the group"
        failure = _died(processes, folder, f"{'in' if ready else 'while'} {what}")
        if failure is None and time.monotonic() > deadline:
            stuck = _where_stuck(processes, folder)
            failure = f"no rank finished {what} within {case_timeout_s:g} s"
            failure += (f" ({stuck})" if stuck else "") + "; both ranks were stopped"
        if failure is not None:
            return records, failure
        time.sleep(0.1)
    return records, None
