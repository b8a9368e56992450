"""``python -m pp_demo bench``: the pipeline against the best one process and this machine's limit.

A benchmark, not a test. In one run, every process with one thread:

1. **the baseline**: the best one-process run of the same work (``work``): the whole batch,
   or the same m micro-batches in turn; the pipeline's own compute summed over its ranks
   also counts (``breakdown.pipeline_row``);
2. **the machine's capacity** c: two one-process runs at the same time (``work.capacity``);
3. **the pipeline** on p = 2 and 3 ranks for each m, timed from inside each rank (``timers``),
   each step split per rank into compute, bubble, waiting on sends and receives and the
   engine's bookkeeping (``breakdown``).

Each row reports ``of_ideal`` (against GPipe's p·m/(m+p-1) on p free cores) and
``of_limit`` (against the same schedule on a machine whose two cores give c: ``bounds``).
Three ranks on two cores are oversubscribed; the limit says so. ``report`` reads the
results file back (docs/results.md and notebook 02 print from it); ``figure`` draws it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

from pp_demo.errors import BadInput

from .bounds import busy_stages, ideal_speedup, limit_speedup
from .breakdown import pipeline_row
from .report import BOUND_RULE, format_bench, load_results, readme_block, summary_lines, write_readme_block
from .timers import BenchJob
from .work import BenchSize, capacity, one_process_times

__all__ = [
    "BenchSize",
    "BenchJob",
    "check_bench",
    "run_bench",
    "format_bench",
    "load_results",
    "summary_lines",
    "readme_block",
    "write_readme_block",
    "ideal_speedup",
    "limit_speedup",
    "busy_stages",
    "BOUND_RULE",
]

MODES = ("inference", "training")


def _versions() -> dict[str, str]:
    import torch
    import transformers

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "processor": platform.processor() or platform.machine(),
        "cpus": str(os.cpu_count()),
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def check_bench(size: BenchSize, stages: tuple[int, ...], micro_batches: tuple[int, ...], warmup: int) -> None:
    """Refuse, in one line and before anything starts, what the benchmark cannot run."""
    for p in stages:
        if not 2 <= p <= size.layers:
            raise BadInput(f"a pipeline of {size.layers} layers runs on 2..{size.layers} ranks, got {p}")
    for m in micro_batches:
        if m < 1 or size.batch % m:
            raise BadInput(f"a batch of {size.batch} rows does not split into {m} equal micro-batches")
    if warmup < 0:
        raise BadInput(f"the warm-up count is 0 or more, got {warmup}")


def run_bench(
    size: BenchSize | None = None,
    stages: tuple[int, ...] = (2, 3),
    micro_batches: tuple[int, ...] = (2, 4, 8),
    warmup: int = 1,
    repeats: int = 3,
    progress: Callable[[str], None] = lambda line: None,
    timeout_s: float = 1800,
) -> dict[str, Any]:
    """Every measurement as one dict (the JSON file's content); ``progress`` hears each phase."""
    from pp_demo.pipeline.runner import run

    size = BenchSize() if size is None else size
    check_bench(size, stages, micro_batches, warmup)
    load_start, started = _load(), time.monotonic()
    progress(f"load average at the start (1, 5, 15 min): {load_start}")
    progress("one process, one thread: the whole batch and each m in turn ...")
    tasks = [(mode, m) for mode in MODES for m in (0, *micro_batches)]
    alone = one_process_times(size, tasks, warmup, repeats)
    caps = {}
    for mode in MODES:
        progress(f"two processes at once ({mode}) ...")
        caps[mode] = capacity(size, mode, alone[f"{mode}/0"], warmup, repeats)
    rows = []
    for p in stages:
        progress(f"the pipeline on {p} ranks, m = {', '.join(map(str, micro_batches))} ...")
        # a BenchJob is a RankJob, not a Job: its answer is its last rank's dict, not a Result
        answers: list[Any] = (
            run([BenchJob(size, m, p, MODES, warmup, repeats) for m in micro_batches], on="ranks", timeout_s=timeout_s)
            or []
        )
        for m, answer in zip(micro_batches, answers, strict=True):
            ranks = answer["ranks"]
            for mode in MODES:
                best_alone = {
                    "one_process_whole_batch": min(alone[f"{mode}/0"]),
                    "one_process_micro_batches_in_turn": min(alone[f"{mode}/{m}"]),
                }
                rows.append(
                    pipeline_row(
                        p,
                        m,
                        mode,
                        ranks[0]["schedule"][mode],
                        [r["steps"][mode] for r in ranks],
                        best_alone,
                        caps[mode]["c"],
                    )
                )
    from pp_demo.bench.colossalai_peer import bench_peer  # ColossalAI's plugin, the same step

    best = {k: min(v) for k, v in alone.items()}
    peers = bench_peer(size, micro_batches, warmup, repeats, best, rows, progress)
    progress(f"done in {time.monotonic() - started:.0f} s")
    return {
        "settings": {
            "size": size.as_dict(),
            "stages": list(stages),
            "micro_batches": list(micro_batches),
            "modes": list(MODES),
            "warmup": warmup,
            "repeats": repeats,
            "threads_per_process": 1,
            "statistic": "fastest of the repeats",
            "backend": "gloo",
        },
        "load_average": {"start": load_start, "end": _load()},
        "versions": _versions(),
        "one_process_s": {k: round(min(v), 4) for k, v in alone.items()},
        "capacity": {mode: {k: round(v, 4) for k, v in cap.items()} for mode, cap in caps.items()},
        "rows": rows,
        "peers": peers,
    }
