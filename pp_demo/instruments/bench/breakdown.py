"""From each rank's timed intervals to a results row: the pipeline's time, per-rank
breakdown, baseline and ratios.

Per rank, in the step kept (the fastest of the repeats, start of the first rank to end of
the last), every second falls in exactly one of four measured parts:

* ``compute_s``: its stage's forwards, backwards and loss;
* ``idle_s``: the bubble: waiting on a receive (or send) while a neighbouring rank is
  computing, plus the time before its first and after its last operation in the step;
* ``p2p_wait_s``: waits on sends and receives while no neighbour computes (the transfer, a
  neighbour's bookkeeping);
* ``bookkeeping_s``: the rest: the engine between operations (splitting the batch,
  building the send and receive lists, the loss bookkeeping, gradient scaling).
"""

from __future__ import annotations

from typing import Any

from pp_demo.records.bench import micro_batch_terms

from .bounds import ideal_speedup, limit_speedup

__all__ = ["Interval", "step_breakdown", "phase_means", "pipeline_row"]

Interval = tuple[str, float, float]
_COMPUTE = ("F", "B", "L")


def _overlap(interval: tuple[float, float], others: list[tuple[float, float]]) -> float:
    """Seconds of ``interval`` covered by the union of ``others``."""
    start, end, covered, reach = interval[0], interval[1], 0.0, interval[0]
    for a, b in sorted(others):
        a, b = max(a, reach, start), min(b, end)
        if b > a:
            covered += b - a
            reach = b
    return covered


def step_breakdown(steps: list[Any]) -> dict[str, Any]:
    """One step on every rank (rank order), each ``(start, end, intervals)`` and, where recorded,
    the CPU seconds per kind (``timers.Recorder``): its wall time, each rank's parts and timeline."""
    t0, t1 = min(s[0] for s in steps), max(s[1] for s in steps)
    computing = [[(a, b) for kind, a, b in s[2] if kind in _COMPUTE] for s in steps]
    ranks = []
    for r, (start, end, intervals, *cpu) in enumerate(steps):
        neighbours = [iv for q in (r - 1, r + 1) if 0 <= q < len(steps) for iv in computing[q]]
        compute = sum(b - a for a, b in computing[r])
        waits = [(a, b) for kind, a, b in intervals if kind == "W"]
        waiting_on_work = sum(_overlap(w, neighbours) for w in waits)
        waited = sum(b - a for a, b in waits)
        ranks.append(
            {
                "compute_s": compute,
                "p2p_wait_s": waited - waiting_on_work,
                "idle_s": waiting_on_work + (start - t0) + (t1 - end),
                "bookkeeping_s": (end - start) - compute - waited,
                **({"cpu_s": {k: round(v, 4) for k, v in cpu[0].items()}} if cpu else {}),
                # the timeline leaves out the waits too short to draw (most are)
                "timeline": [
                    [kind, round(a - t0, 4), round(b - t0, 4)]
                    for kind, a, b in intervals
                    if kind != "W" or b - a >= 5e-4
                ],
            }
        )
    return {"wall_s": t1 - t0, "ranks": ranks}


def phase_means(breakdown: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Per rank, from its timeline: the mean seconds of a micro-batch's forward (with the loss on
    the last stage, which ColossalAI's schedule computes inside its forward) and backward; and,
    where recorded, the CPU seconds of each (``F_cpu_s``, ``B_cpu_s``)."""
    out = []
    for rank in breakdown:
        spans: dict[str, float] = {"F": 0.0, "B": 0.0}
        counts = {k: sum(1 for kind, _, _ in rank["timeline"] if kind == k) for k in spans}
        for kind, a, b in rank["timeline"]:
            if kind in _COMPUTE:  # a loss counts with the forward it scores
                spans["F" if kind == "L" else kind] += b - a
        means = {f"{k}_s": _r(spans[k] / counts[k]) if counts[k] else 0.0 for k in spans}
        if "cpu_s" in rank:
            cpu = rank["cpu_s"]
            spent = {"F": cpu.get("F", 0.0) + cpu.get("L", 0.0), "B": cpu.get("B", 0.0)}
            means |= {f"{k}_cpu_s": _r(spent[k] / counts[k]) if counts[k] else 0.0 for k in spent}
        out.append(means)
    return out


def pipeline_row(
    p: int, m: int, mode: str, schedule: str, rank_steps: list[list[Any]], one_process_s: dict[str, float], c: float
) -> dict[str, Any]:
    """The row of (p, m, mode): the fastest step, the baseline, the ideal and the limit.

    The baseline is the best one-thread run of the same work (``baseline_candidates_s``; the
    pipeline's compute summed over its ranks is the same stage calls in sequence, as fast as
    the ranks ran them); ``one_process_s``: the best time of each task, by ``"mode/m"``."""
    steps = [step_breakdown([rank[k] for rank in rank_steps]) for k in range(len(rank_steps[0]))]
    best = min(steps, key=lambda s: s["wall_s"])
    whole, in_turn = one_process_s[f"{mode}/0"], one_process_s[f"{mode}/{m}"]
    candidates = {
        "one_process_whole_batch": whole,
        "one_process_micro_batches_in_turn": in_turn,
        "pipeline_compute_summed": sum(r["compute_s"] for r in best["ranks"]),
    }
    source = min(candidates, key=lambda k: candidates[k])
    baseline, wall = candidates[source], best["wall_s"]
    speedup, ideal, limit = baseline / wall, ideal_speedup(p, m), limit_speedup(p, m, c)
    return {
        "p": p,
        "m": m,
        "mode": mode,
        "schedule": schedule,
        "pipeline_s": _r(wall),
        "baseline_s": _r(baseline),
        "baseline_from": source,
        "baseline_candidates_s": {k: _r(v) for k, v in candidates.items()},
        "speedup": _r(speedup),
        "ideal": _r(ideal),
        "limit": _r(limit),
        "of_ideal": _r(speedup / ideal),
        "of_limit": _r(speedup / limit),
        **micro_batch_terms(whole, in_turn, limit, wall),
        "steps_s": [_r(s["wall_s"]) for s in steps],
        "breakdown": [{k: (_r(v) if isinstance(v, float) else v) for k, v in r.items()} for r in best["ranks"]],
    }


def _r(x: float) -> float:
    return round(x, 4)
