"""``python -m pp_demo bench``: the pipeline against the best one process and this machine's limit.

A benchmark, not a test: it starts on a quiet machine or says it did not (``quiet_start``), and the
command judges the run's noise by its own repeated steps (``steadiness``). In one run, every
process with one thread, in rounds (each measurement once per round):

1. **the baseline**: the best one-thread run of the same work (``one_process``): the whole batch,
   the same m micro-batches in turn, or the pipeline's own compute summed over its ranks;
2. **the pipeline** on p = 2 and 3 ranks for each m, timed from inside each rank (``timers``), each
   step split per rank into compute, bubble, waits and bookkeeping (``breakdown``);
3. **ColossalAI's plugin** on the same training step (``colossalai_peer``), when installed;
4. after the rounds, **the machine's capacity** c: two one-process runs at once.

Each row reports ``of_ideal`` (against GPipe's p·m/(m+p-1) on p free cores), ``of_limit`` (against
the same schedule on a machine whose two cores give c: ``bounds``), and ``of_micro_batch_limit``
beside ``micro_batch_cost`` (``pp_demo.records.bench.micro_batch_terms``). Three ranks on two cores are
oversubscribed; the limit says so. ``report`` reads the results file back for docs/results.md and the command;
notebook 10 reads it through ``pp_demo.records.bench``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

from pp_demo.bounds import seconds
from pp_demo.errors import BadInput
from pp_demo.silent_imports import installed

from .allocator import MALLOC_THRESHOLDS, malloc_thresholds_settable
from .bounds import busy_stages, ideal_speedup, limit_speedup
from .breakdown import pipeline_row
from .colossalai_peer import peer_rows, time_colossalai
from .one_process import BenchSize, capacity, one_process_times
from .quiet_start import WAIT_S, check_quiet_start, load_average, wait_for_quiet
from .report import format_bench, readme_block
from .timers import BenchJob

__all__ = [
    "BenchSize",
    "BenchJob",
    "check_bench",
    "run_bench",
    "format_bench",
    "readme_block",
    "ideal_speedup",
    "limit_speedup",
    "busy_stages",
]

MODES = ("inference", "training")
_Key = tuple[int, int, str]  # a row's (p, m, mode)


def check_bench(size: BenchSize, stages: tuple[int, ...], micro_batches: tuple[int, ...], warmup: int) -> None:
    """Refuse, in one line and before anything starts, what the benchmark cannot run, in the
    command's flags (where a size is most often mistyped)."""
    layers = size.layers
    if layers < 2:
        raise BadInput(f"--layers {layers}: a pipeline needs 2 layers or more (one per stage); give --layers 2 or more")
    for p in stages:
        if not 2 <= p <= layers:
            raise BadInput(
                f"--stages {p} with --layers {layers}: each stage holds at least one layer, so give --stages "
                f"from 2 to {layers} (or more --layers)"
            )
    if size.hidden % 8:
        raise BadInput(f"--hidden {size.hidden}: the bench's model has 8 attention heads: give a multiple of 8")
    for m in micro_batches:
        if m < 1 or size.batch % m:
            raise BadInput(
                f"--micro-batches {m} with --batch {size.batch}: the batch does not split into {m} equal parts"
            )
    if warmup < 0:
        raise BadInput(f"--warmup {warmup}: the warm-up count is 0 or more")


def _extend(into: dict[Any, list[list[Any]]], steps: dict[Any, list[list[Any]]]) -> None:
    """Append a round's steps, rank by rank, to those of the rounds before."""
    for key, per_rank in steps.items():
        kept = into.setdefault(key, [[] for _ in per_rank])
        for mine, new in zip(kept, per_rank, strict=True):
            mine.extend(new)


def _rounds(
    size: BenchSize,
    stages: tuple[int, ...],
    micro_batches: tuple[int, ...],
    counts: tuple[int, int, int],
    progress: Callable[[str], None],
    timeout_s: float,
) -> tuple[dict[str, list[float]], dict[_Key, str], dict[_Key, list[list[Any]]], dict[int, list[list[Any]]]]:
    """``counts`` = (warm-up, repeats, rounds). Each round runs the one-process work, the pipeline on
    every p and ColossalAI's plugin one after the other, so a change of the machine's load between
    them falls on all alike. Every run's seconds (one process), each row's schedule, and per rank the
    timed steps of the pipeline and of ColossalAI (none when it is not installed)."""
    from pp_demo.ranks.runner import run

    warmup, repeats, rounds = counts
    with_peer = installed("colossalai")
    if not with_peer:
        progress("ColossalAI is not installed (make colossalai): no ColossalAI row")
    tasks = [(mode, m) for mode in MODES for m in (0, *micro_batches)]
    alone: dict[str, list[float]] = {}
    schedules: dict[_Key, str] = {}
    pipeline: dict[_Key, list[list[Any]]] = {}
    peer: dict[int, list[list[Any]]] = {}
    for k in range(1, rounds + 1):
        progress(f"round {k} of {rounds}: one process, one thread: the whole batch and each m in turn ...")
        for key, times in one_process_times(size, tasks, warmup, repeats).items():
            alone.setdefault(key, []).extend(times)
        progress(f"round {k} of {rounds}: the pipeline on {', '.join(map(str, stages))} ranks ...")
        for p in stages:  # one start of the ranks per p
            # a BenchJob is a RankJob, not a Job: its answer is its last rank's dict, not a Result
            jobs = [BenchJob(size, m, p, MODES, warmup, repeats) for m in micro_batches]
            answers: list[Any] = run(jobs, on="ranks", timeout_s=timeout_s) or []
            for m, answer in zip(micro_batches, answers, strict=True):
                for mode in MODES:
                    schedules[p, m, mode] = answer["ranks"][0]["schedule"][mode]
                    _extend(pipeline, {(p, m, mode): [rank["steps"][mode] for rank in answer["ranks"]]})
        if with_peer:
            progress(f"round {k} of {rounds}: ColossalAI's plugin on 2 ranks (1F1B training step) ...")
            _extend(peer, time_colossalai(size.as_dict(), micro_batches, warmup, repeats, timeout_s))
    return alone, schedules, pipeline, peer


def run_bench(
    size: BenchSize | None = None,
    stages: tuple[int, ...] = (2, 3),
    micro_batches: tuple[int, ...] = (2, 4, 8),
    warmup: int = 1,
    repeats: int = 3,
    progress: Callable[[str], None] = lambda line: None,
    timeout_s: float = 1800,
    rounds: int = 2,
    wait_s: float | None = None,
    replaces_committed: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Every measurement as one dict (the JSON file's content); ``progress`` hears each phase.

    A busy start (``quiet_start``) that would replace the committed file is refused unless
    ``force``; each measurement keeps its fastest of the ``rounds`` rounds (``_rounds``).
    ``wait_s``: the longest wait for quiet (None: ``quiet_start.WAIT_S``)."""
    size = BenchSize() if size is None else size
    check_bench(size, stages, micro_batches, warmup)
    if rounds < 1:
        raise BadInput(f"the benchmark runs at least one round, got {rounds}")
    wait_s = WAIT_S if wait_s is None else seconds(wait_s, "wait_s", zero=True)
    start = check_quiet_start(wait_for_quiet(wait_s, progress), replaces_committed, force)
    started = time.monotonic()
    progress(f"load average at the start (1, 5, 15 min): {start['load']}")
    counts = (warmup, repeats, rounds)
    alone, schedules, pipeline, peer = _rounds(size, stages, micro_batches, counts, progress, timeout_s)
    caps = {}
    for mode in MODES:
        progress(f"two processes at once ({mode}) ...")
        caps[mode] = capacity(size, mode, alone[f"{mode}/0"], warmup, repeats)
    best = {key: min(times) for key, times in alone.items()}
    rows = [
        pipeline_row(p, m, mode, schedules[p, m, mode], steps, best, caps[mode]["c"])
        for (p, m, mode), steps in pipeline.items()
    ]
    progress(f"done in {time.monotonic() - started:.0f} s")
    import torch  # for the versions; imported by now, and never before the checks above
    import transformers

    return {
        "settings": {
            "size": size.as_dict(),
            "stages": list(stages),
            "micro_batches": list(micro_batches),
            "modes": list(MODES),
            "warmup": warmup,
            "repeats": repeats,
            "rounds": rounds,
            "threads_per_process": 1,
            "malloc_thresholds": MALLOC_THRESHOLDS if malloc_thresholds_settable() else "the platform's own",
            "statistic": "fastest of the repeats of every round",
            "backend": "gloo",
        },
        "quiet_start": start,
        # at the end, the load includes the benchmark's own ranks
        "load_average": {"start": start["load"], "end": load_average()},
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
            "processor": platform.processor() or platform.machine(),
            "cpus": str(os.cpu_count()),
        },
        "one_process_s": {k: round(v, 4) for k, v in best.items()},
        "capacity": {mode: {k: round(v, 4) for k, v in cap.items()} for mode, cap in caps.items()},
        "rows": rows,
        "peers": peer_rows(peer, best, rows, caps["training"]["c"]) if peer else [],
    }
