"""The results file read back: what docs/results.md and the command print (what notebook 10 and
the figure read is ``pp_demo.records.bench``'s, imported here).

Everything here reads ``results/bench_cpu.json`` (or a dict like it) and formats, never measures
or writes. docs/results.md's benchmark block is ``readme_block`` of the committed file
(``python -m tools.bench_docs`` writes it), and a test checks the page holds it, so the two
cannot drift.
"""

from __future__ import annotations

from typing import Any

from pp_demo.records.bench import capacities, load_averages, load_results, measured_quietly, micro_batch, summary_lines

from .breakdown import phase_means
from .colossalai_peer import peer_lines
from .steadiness import STEADY, steadiness

__all__ = ["format_bench", "phase_table", "readme_block"]

_PARTS = ("compute_s", "idle_s", "p2p_wait_s", "bookkeeping_s")
_RATIOS = ("speedup", "ideal", "of_ideal", "limit", "of_limit")
_PHASES = {  # a phase's key in ``_phases`` and its column's head
    "F_s": "forward",
    "F_cpu_s": "forward CPU",
    "B_s": "backward",
    "B_cpu_s": "backward CPU",
    "idle_s": "idle",
    "p2p_wait_s": "p2p wait",
    "bookkeeping_s": "bookkeeping",
    "other_cpu_s": "other CPU",
}
_PHASE_HEAD = ["m", "rank", *_PHASES.values()]
_NOT_IN_FILE = "not in this file"


def _ours(result: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any] | None:
    """pp_demo's two-rank row beside a ColossalAI row (the same m and mode)."""
    return next((r for r in result["rows"] if (r["p"], r["m"], r["mode"]) == (2, peer["m"], peer["mode"])), None)


def format_bench(result: dict[str, Any]) -> str:
    """The table the command prints, with each rank's breakdown in seconds."""
    lines = [
        *summary_lines(result)[:2],  # the load and c
        "",
        "mb cost: the m micro-batches in turn over the whole batch, one process; of mb limit: the limit",
        "built from that time (the schedule's share); per rank: compute idle p2p-wait bookkeeping (s)",
        f"{'p':>1} {'m':>2} {'mode':<9} {'pipe s':>6} {'base s':>6} {'speedup':>7} {'ideal':>5} {'limit':>5} "
        f"{'of ideal':>8} {'of limit':>8} {'mb cost':>7} {'of mb limit':>11}  per rank",
    ]
    for row in result["rows"]:
        mb = micro_batch(result, row)
        parts = " | ".join(" ".join(f"{rank[k]:.2f}" for k in _PARTS) for rank in row["breakdown"])
        lines.append(
            f"{row['p']:>1} {row['m']:>2} {row['mode']:<9} {row['pipeline_s']:>6.2f} "
            f"{row['baseline_s']:>6.2f} {row['speedup']:>7.2f} {row['ideal']:>5.2f} {row['limit']:>5.2f} "
            f"{row['of_ideal']:>8.2f} {row['of_limit']:>8.2f} {mb['micro_batch_cost']:>7.2f} "
            f"{mb['of_micro_batch_limit']:>11.2f}  {parts}"
        )
    return "\n".join(lines + peer_lines(result.get("peers") or []) + _phase_lines(result))


def _phase_lines(result: dict[str, Any]) -> list[str]:
    """The phase table as the command prints it."""
    table = [_PHASE_HEAD, *phase_table(result)]
    if len(table) == 1:
        return []
    widths = [max(map(len, column)) for column in zip(*table, strict=True)]
    return [
        "a micro-batch's forward, backward; the step's idle, wait, bookkeeping, other CPU (ms, pp_demo / ColossalAI):",
        *("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table),
    ]


def _phases(row: dict[str, Any]) -> list[dict[str, float]]:
    """Per rank, in seconds: a micro-batch's forward and backward (mean,
    ``breakdown.phase_means``), the step's idle, waiting and bookkeeping time, and the process's
    CPU time in the step outside its thread's forwards, backwards, losses and waits (the engine's
    bookkeeping, its communication threads' work)."""
    phases = []
    for means, rank in zip(phase_means(row["breakdown"]), row["breakdown"], strict=True):
        cpu = rank.get("cpu_s")
        other = {} if cpu is None else {"other_cpu_s": cpu["step"] - sum(v for k, v in cpu.items() if k != "step")}
        phases.append({**means, **{k: rank[k] for k in _PARTS[1:]}, **other})
    return phases


def phase_table(result: dict[str, Any]) -> list[list[str]]:
    """Per m and rank: pp_demo's phases (``_phases``) beside ColossalAI's in the same run, in
    ms; empty for a file whose ColossalAI rows were not timed by phase."""
    table = []
    for peer in result.get("peers") or []:
        ours = _ours(result, peer)
        if "breakdown" not in peer or ours is None:
            continue
        for rank, (a, b) in enumerate(zip(_phases(ours), _phases(peer), strict=True)):
            cells = [f"{1000 * a.get(k, 0.0):.1f} / {1000 * b.get(k, 0.0):.1f}" for k in _PHASES]
            table.append([str(peer["m"]), str(rank), *cells])
    return table


def _cpu_ratios(ours: dict[str, Any], peer: dict[str, Any]) -> str:
    """Per rank, the CPU seconds of pp_demo's step over ColossalAI's: the work each engine's rank
    did, without the time it waited for a CPU (a neighbour on the same physical core slows it still)."""
    ranks = list(zip(ours["breakdown"], peer.get("breakdown", []), strict=False))
    if not ranks or not all("cpu_s" in a and "cpu_s" in b for a, b in ranks):
        return _NOT_IN_FILE
    return "; ".join(f"{a['cpu_s']['step'] / b['cpu_s']['step']:.2f}" for a, b in ranks)


def _markdown(cells: list[Any]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _measured_with(result: dict[str, Any]) -> str:
    """The block's first line: the load, the CPUs, c and how the run started."""
    start, end = load_averages(result)
    busy = "" if measured_quietly(result) else " (a busy machine: c and of_limit hold for this run only)"
    line = (
        f"Measured with load average (1, 5, 15 min) at the start {start}; at the end {end}; "
        f"{result['versions']['cpus']} CPUs{busy}; c = {capacities(result)}."
    )
    quiet = result.get("quiet_start")
    if quiet is not None:
        how = "quiet" if quiet["quiet"] else ("busy, forced" if quiet["forced"] else "busy")
        line += (
            f" The run started at a 1-minute load of {quiet['load'][0]:.2f} ({how}; after {quiet['waited_s']:.0f} s "
            "of waiting)."
        )
    # judged again from the steps: files from before the rule have no "steadiness" record
    judged = steadiness(result, force=result.get("steadiness", {}).get("forced", False))
    verdict = "steady" if judged["steady"] else ("noisy, forced" if judged["forced"] else "noisy")
    return line + (
        f" A row's median step lies {judged['noise']:.0%} above its fastest, at the median over rows ({verdict}: the "
        f"committed file needs {STEADY:.0%} or less)."
    )


def _peers_block(result: dict[str, Any]) -> list[str]:
    """ColossalAI's rows beside pp_demo's, as the results page shows them."""
    lines = [
        "",
        "ColossalAI's plugin on the same training step (p = 2, 1F1B), beside pp_demo's row:",
        "",
        "| m | ColossalAI's time / pp_demo's | pp_demo of limit | ColossalAI of limit | "
        "pp_demo of micro-batch limit | ColossalAI of micro-batch limit | "
        "CPU time of a step, pp_demo / ColossalAI, per rank |",
        "|---|---|---|---|---|---|---|",
    ]
    for peer in result["peers"]:
        ours = _ours(result, peer)
        assert ours is not None  # a run times pp_demo's two-rank row beside each of ColossalAI's
        theirs = (_NOT_IN_FILE, _NOT_IN_FILE)
        if "limit" in peer:
            theirs = (f"{peer['of_limit']:.2f}", f"{micro_batch(result, peer)['of_micro_batch_limit']:.2f}")
        lines.append(
            f"| {peer['m']} | {peer['colossalai_over_pp_demo']:.2f} | {ours['of_limit']:.2f} | {theirs[0]} | "
            f"{micro_batch(result, ours)['of_micro_batch_limit']:.2f} | {theirs[1]} | {_cpu_ratios(ours, peer)} |"
        )
    return lines


def readme_block(result: dict[str, Any] | None = None) -> str:
    """The results page's tables, from the results file (a test keeps docs/results.md equal to
    it): ratios and shares per row, then ColossalAI beside pp_demo and their phases."""
    result = load_results() if result is None else result
    lines = [
        _measured_with(result),
        "",
        "| p | m | mode | schedule | speedup | GPipe ideal | of ideal | limit | of limit | micro-batch cost | "
        "of micro-batch limit | per rank: compute / idle / p2p wait / bookkeeping, % of the step |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        mb = micro_batch(result, row)
        ratios = [f"{x:.2f}" for x in [*(row[k] for k in _RATIOS), mb["micro_batch_cost"], mb["of_micro_batch_limit"]]]
        parts = "; ".join(" / ".join(f"{100 * r[k] / row['pipeline_s']:.0f}" for k in _PARTS) for r in row["breakdown"])
        lines.append(_markdown([row["p"], row["m"], row["mode"], row["schedule"], *ratios, parts]))
    lines += _peers_block(result) if result.get("peers") else []
    lines += [
        "",
        "A micro-batch's forward and backward (mean; on the clock, and in the rank's CPU time), the step's "
        "idle, waiting and bookkeeping time, and the CPU time of the rest of the step (bookkeeping and the "
        "communication threads), in milliseconds, pp_demo / ColossalAI:",
        "",
    ]
    if table := phase_table(result):
        lines += [_markdown(_PHASE_HEAD), "|" + "---|" * len(_PHASE_HEAD), *map(_markdown, table)]
    else:
        lines.append("(not in this file: its ColossalAI rows were timed as whole steps; a new run times them by phase)")
    return "\n".join(lines)
