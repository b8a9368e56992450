"""The benchmark's committed results, ``results/bench_cpu.json``, read back: what notebook 10 and
the benchmark figure read (``summary_lines``, ``micro_batch``).

Everything here reads the file (or a dict like it) and formats, never measures or writes. The
benchmark (``pp_demo.instruments.bench``) writes the file, and its report prints these lines too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pp_demo.errors import BadInput

__all__ = [
    "RESULTS",
    "results_file",
    "load_results",
    "measured_quietly",
    "micro_batch_terms",
    "micro_batch",
    "load_averages",
    "capacities",
    "summary_lines",
]

RESULTS = Path("results") / "bench_cpu.json"  # in the checkout, not beside the package: a wheel has none


def results_file(here: Path | None = None) -> Path:
    """The checkout's ``results/bench_cpu.json`` seen from ``here`` (default: the current folder):
    the checkout's root, or a folder inside it such as ``notebooks/``, where a notebook runs."""
    here = Path.cwd() if here is None else here
    found = [folder / RESULTS for folder in (here, here.parent) if (folder / RESULTS).is_file()]
    if not found:
        raise BadInput(f"no {RESULTS} in {here} or its parent: run from the checkout, or give the file's path")
    return found[0]


def load_results(path: str | Path | None = None) -> dict[str, Any]:
    """The committed benchmark results: ``path``, else the checkout's (``results_file``)."""
    result: dict[str, Any] = json.loads(Path(results_file() if path is None else path).read_text())
    return result


def measured_quietly(result: dict[str, Any]) -> bool:
    """Whether the run started on a quiet machine: only then is c this machine's, and
    ``of_limit`` a claim. A run that waited for quiet (``quiet_start``) says so itself; an older
    file, by a start with less than half the CPUs busy (1-minute load average). (At its end the
    load includes the benchmark's own ranks.)"""
    if "quiet_start" in result:
        return bool(result["quiet_start"]["quiet"])
    return float(result["load_average"]["start"][0]) < int(result["versions"]["cpus"]) / 2


def _r(x: float) -> float:
    return round(x, 4)


def micro_batch_terms(whole_s: float, in_turn_s: float, limit: float, pipeline_s: float) -> dict[str, float]:
    """The limit built from what it assumes: the one-process time of the same m micro-batches in
    turn (each at its own size) over the limit speedup is the fastest the schedule could step on
    this machine; ``of_micro_batch_limit`` is the schedule's share of it. ``micro_batch_cost`` is
    what cutting the batch costs one process: that time over the whole batch's (1 = free)."""
    limit_s = in_turn_s / limit
    return {
        "micro_batch_s": _r(in_turn_s),
        "micro_batch_cost": _r(in_turn_s / whole_s),
        "micro_batch_limit_s": _r(limit_s),
        "of_micro_batch_limit": _r(limit_s / pipeline_s),
    }


def micro_batch(result: dict[str, Any], row: dict[str, Any]) -> dict[str, float]:
    """The row's micro-batch limit and cost (``micro_batch_terms``): as stored, or, in a file from
    before they were, from the one-process times it holds."""
    if "of_micro_batch_limit" in row:
        return {k: row[k] for k in ("micro_batch_s", "micro_batch_cost", "micro_batch_limit_s", "of_micro_batch_limit")}
    alone = result["one_process_s"]
    m, mode = row["m"], row["mode"]
    return micro_batch_terms(alone[f"{mode}/0"], alone[f"{mode}/{m}"], row["limit"], row["pipeline_s"])


def load_averages(result: dict[str, Any]) -> tuple[str, ...]:
    """The load averages (1, 5, 15 min) at the start and at the end, as printed."""
    return tuple(", ".join(f"{x:.2f}" for x in result["load_average"][k]) for k in ("start", "end"))


def capacities(result: dict[str, Any]) -> str:
    """c per mode, as printed: ``1.93 (inference), 1.88 (training)``."""
    return ", ".join(f"{cap['c']:.2f} ({mode})" for mode, cap in result["capacity"].items())


def summary_lines(result: dict[str, Any] | None = None) -> list[str]:
    """What a reader is told, each line at most 88 wide (notebook 10 prints it for a projector):
    the load, c, a two-line legend, a row per run. ``result`` None: the committed file."""
    result = load_results() if result is None else result
    start, end = load_averages(result)
    c = capacities(result)
    lines = [
        f"load average (1, 5, 15 min): start {start}; end {end}; {result['versions']['cpus']} CPUs",
        f"two one-thread processes at once give c = {c} times one"
        if measured_quietly(result)
        else f"c = {c}, on a busy machine: c and of limit hold for this run only",
        "speedup: over the best one process; ideal: GPipe's p·m / (m + p - 1);",
        "limit: from c (pp_demo.instruments.bench.bounds); of ideal, of limit: speedup / each",
        f"{'p':>1}  {'m':>1}  {'mode':<9}  {'schedule':<13}  {'speedup':>7}  {'ideal':>5}  {'of ideal':>8}  "
        f"{'limit':>5}  {'of limit':>8}",
    ]
    return lines + [
        f"{row['p']:>1}  {row['m']:>1}  {row['mode']:<9}  {row['schedule']:<13}  {row['speedup']:>6.2f}x  "
        f"{row['ideal']:>4.2f}x  {row['of_ideal']:>8.2f}  {row['limit']:>4.2f}x  {row['of_limit']:>8.2f}"
        for row in result["rows"]
    ]
