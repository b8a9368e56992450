"""The results file read back: what docs/results.md, notebook 10 and the command print.

Everything here reads ``results/bench_cpu.json`` (or a dict like it) and formats; nothing
measures. The benchmark block of docs/results.md is ``readme_block`` of the committed file, and a
test checks that the page holds it, so the page cannot drift from the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pp_demo.errors import BadInput

__all__ = [
    "RESULTS",
    "results_file",
    "BOUND_RULE",
    "OF_LIMIT_NOISE",
    "measured_quietly",
    "load_results",
    "summary_lines",
    "format_bench",
    "readme_block",
    "write_readme_block",
    "check_readme",
]

RESULTS = Path("results") / "bench_cpu.json"  # in the checkout, not beside the package: a wheel has none
OF_LIMIT_NOISE = 0.05
_PARTS = ("compute_s", "idle_s", "p2p_wait_s", "bookkeeping_s")
BOUND_RULE = (
    "of_ideal <= 1 in every row, exactly as stored: the baseline is the best one-thread run of the same "
    "work, the pipeline's own compute among the candidates, so a row above the ideal means the machine's "
    "load changed between the measurements (run again on a quieter machine). of_limit <= 1 + 0.05 in a "
    "run measured quietly (see measured_quietly): the capacity c is measured apart from the pipeline, "
    "one timing varies by about 5%, and on a busy machine c measures the other users as well."
)


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
    with open(results_file() if path is None else path) as f:
        result: dict[str, Any] = json.load(f)
    return result


def measured_quietly(result: dict[str, Any]) -> bool:
    """Whether the run started with less than half the CPUs busy (1-minute load average):
    only then is c this machine's, and ``of_limit`` a claim. (At its end the load includes
    the benchmark's own ranks.)"""
    return float(result["load_average"]["start"][0]) < int(result["versions"]["cpus"]) / 2


def _load_line(result: dict[str, Any]) -> str:
    start, end = result["load_average"]["start"], result["load_average"]["end"]
    cpus = result["versions"]["cpus"]
    return (
        f"load average (1, 5, 15 min) at the start {start[0]:.2f}, {start[1]:.2f}, {start[2]:.2f}; "
        f"at the end {end[0]:.2f}, {end[1]:.2f}, {end[2]:.2f}; {cpus} CPUs"
        + ("" if measured_quietly(result) else " (a busy machine: c and of_limit hold for this run only)")
    )


def summary_lines(result: dict[str, Any] | None = None) -> list[str]:
    """What a reader is told, each line at most 88 wide (notebook 10 prints it for a projector):
    the load, c, a two-line legend, then a table with a row per run: the speedup over the best one
    process, the GPipe ideal and this machine's limit, and the speedup's share of each. The
    committed file when ``result`` is None."""
    result = load_results() if result is None else result
    start, end = result["load_average"]["start"], result["load_average"]["end"]
    c = ", ".join(f"{cap['c']:.2f} ({mode})" for mode, cap in result["capacity"].items())
    lines = [
        f"load average (1, 5, 15 min): start {start[0]:.2f}, {start[1]:.2f}, {start[2]:.2f}; "
        f"end {end[0]:.2f}, {end[1]:.2f}, {end[2]:.2f}; {result['versions']['cpus']} CPUs",
        f"two one-thread processes at once give c = {c} times one"
        if measured_quietly(result)
        else f"c = {c}, on a busy machine: c and of limit hold for this run only",
        "speedup: over the best one process; ideal: GPipe's p·m / (m + p - 1);",
        "limit: this machine's (pp_demo.bench.bounds, from c); of ideal, of limit: speedup / each",
        f"{'p':>1}  {'m':>1}  {'mode':<9}  {'schedule':<13}  {'speedup':>7}  {'ideal':>5}  {'of ideal':>8}  "
        f"{'limit':>5}  {'of limit':>8}",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['p']:>1}  {row['m']:>1}  {row['mode']:<9}  {row['schedule']:<13}  {row['speedup']:>6.2f}x  "
            f"{row['ideal']:>4.2f}x  {row['of_ideal']:>8.2f}  {row['limit']:>4.2f}x  {row['of_limit']:>8.2f}"
        )
    return lines


def _parts(row: dict[str, Any]) -> str:
    return " | ".join(
        f"{r['compute_s']:.2f} {r['idle_s']:.2f} {r['p2p_wait_s']:.2f} {r['bookkeeping_s']:.2f}"
        for r in row["breakdown"]
    )


def format_bench(result: dict[str, Any]) -> str:
    """The table the command prints, with each rank's breakdown in seconds."""
    lines = [
        *summary_lines(result)[:2],  # the load and c
        "",
        f"{'p':>1} {'m':>2} {'mode':<9} {'pipe s':>6} {'base s':>6} {'speedup':>7} {'ideal':>5} {'limit':>5} "
        f"{'of ideal':>8} {'of limit':>8}  per rank: compute idle p2p-wait bookkeeping (s)",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['p']:>1} {row['m']:>2} {row['mode']:<9} {row['pipeline_s']:>6.2f} "
            f"{row['baseline_s']:>6.2f} {row['speedup']:>7.2f} {row['ideal']:>5.2f} {row['limit']:>5.2f} "
            f"{row['of_ideal']:>8.2f} {row['of_limit']:>8.2f}  {_parts(row)}"
        )
    from pp_demo.bench.colossalai_peer import peer_lines

    return "\n".join(lines + peer_lines(result.get("peers") or []))


def readme_block(result: dict[str, Any] | None = None) -> str:
    """The results page's table, from the results file (a test keeps docs/results.md equal to it): ratios
    and shares, no seconds."""
    result = load_results() if result is None else result
    lines = [
        f"Measured with {_load_line(result)}; c = "
        + ", ".join(f"{cap['c']:.2f} ({mode})" for mode, cap in result["capacity"].items())
        + ".",
        "",
        "| p | m | mode | schedule | speedup | GPipe ideal | of ideal | limit | of limit | "
        "per rank: compute / idle / p2p wait / bookkeeping, % of the step |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        parts = "; ".join(" / ".join(f"{100 * r[k] / row['pipeline_s']:.0f}" for k in _PARTS) for r in row["breakdown"])
        lines.append(
            f"| {row['p']} | {row['m']} | {row['mode']} | {row['schedule']} | {row['speedup']:.2f} | "
            f"{row['ideal']:.2f} | {row['of_ideal']:.2f} | {row['limit']:.2f} | {row['of_limit']:.2f} | "
            f"{parts} |"
        )
    return "\n".join(lines)


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def _split_readme(readme: str | Path) -> tuple[str, str]:
    """The README's text before its bench block and after it; a one-line error otherwise."""
    path = Path(readme)
    text = path.read_text() if path.is_file() else ""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise BadInput(f"{readme} must be a file with one {BEGIN} line and, after it, one {END} line")
    head, rest = text.split(BEGIN)
    return head + BEGIN + "\n", END + rest.split(END)[1]


def check_readme(readme: str | Path) -> None:
    """Refuse a README without the bench markers before minutes of measuring."""
    _split_readme(readme)


def write_readme_block(readme: str | Path, result: dict[str, Any]) -> None:
    """Replace what stands between the README's bench markers by ``readme_block(result)``."""
    head, tail = _split_readme(readme)
    Path(readme).write_text(f"{head}{readme_block(result)}\n{tail}")
