"""A steady run, or none: how far a run's repeated steps lie from each other, and the rule that
keeps a noisy run out of the committed results.

The load average counts this machine's own processes, not a neighbour on the same physical core: on
a virtual machine another tenant can slow every step without raising the load, so a run that started
quiet (``quiet_start``) may still measure the host. The steps tell: a row's noise is how far its
median timed step (repeats in every round) lies above its fastest, the one it keeps; the run's noise
is the median of that over its rows, pp_demo's and ColossalAI's. The benchmark is read against
differences of 5 % (a row at 0.95 of its limit, ColossalAI's step over pp_demo's at 1.0): a run
noisier than ``STEADY`` cannot tell those apart, so it does not replace the committed results
without ``--force``, and a forced run says so in its file.
"""

from __future__ import annotations

import statistics
from typing import Any

__all__ = ["STEADY", "step_noise", "steadiness"]

STEADY = 0.05  # the most a run's median step may lie above its fastest, at the median over rows


def step_noise(result: dict[str, Any]) -> float:
    """The median over rows (pp_demo's and ColossalAI's) of a row's median step over its fastest, less 1."""
    rows = [*result["rows"], *result.get("peers", [])]
    noise: float = statistics.median(statistics.median(r["steps_s"]) / min(r["steps_s"]) - 1 for r in rows)
    return round(noise, 4)


def steadiness(result: dict[str, Any], force: bool) -> dict[str, Any]:
    """The record the results file keeps: the run's noise, the threshold, whether it is steady and
    whether ``--force`` let an unsteady run replace the committed file."""
    noise = step_noise(result)
    steady = noise <= STEADY
    return {"noise": noise, "threshold": STEADY, "steady": steady, "forced": bool(force and not steady)}
