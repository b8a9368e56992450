"""A quiet run, or none: the benchmark starts on a quiet machine, and says when it did not.

Two one-thread processes on a 2-core machine measure the other users as well as themselves, so
``run_bench`` first waits (at most ``wait_s``) for a 1-minute load average of at most
``QUIET_LOAD``, says so in one line, and records what it found (``wait_for_quiet``). A run that
started busier may be kept anywhere but in place of the committed results file:
``check_quiet_start`` refuses that before any measuring unless forced, and a forced run says so
in its file. The load, clock and sleep are arguments: the tests fake them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from pp_demo.errors import BadInput

__all__ = ["QUIET_LOAD", "WAIT_S", "load_average", "wait_for_quiet", "check_quiet_start"]

QUIET_LOAD = 0.5  # the 1-minute load average a run may start at
WAIT_S = 900.0  # the longest wait for it
_POLL_S = 10.0


def load_average() -> list[float]:
    """The load averages (1, 5, 15 min), rounded as the results file keeps them."""
    return [round(x, 2) for x in os.getloadavg()]


def wait_for_quiet(
    wait_s: float = WAIT_S,
    say: Callable[[str], None] = lambda line: None,
    read: Callable[[], list[float]] = load_average,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Wait until the 1-minute load is at most ``QUIET_LOAD`` or ``wait_s`` has passed; return the
    results file's record of the start (its load: 1, 5, 15 min)."""
    started, load = clock(), read()
    if load[0] > QUIET_LOAD and wait_s > 0:
        say(
            f"the 1-minute load average is {load[0]:.2f}: waiting up to {wait_s:.0f} s for it to fall to "
            f"{QUIET_LOAD} or less"
        )
        while load[0] > QUIET_LOAD and clock() - started < wait_s:
            sleep(min(_POLL_S, max(0.0, wait_s - (clock() - started))))
            load = read()
    waited = round(clock() - started, 1)
    quiet = load[0] <= QUIET_LOAD
    if waited:
        say(f"after {waited:.0f} s the 1-minute load average is {load[0]:.2f}" + ("" if quiet else ": still busy"))
    return {"load": load, "threshold": QUIET_LOAD, "waited_s": waited, "quiet": quiet, "forced": False}


def check_quiet_start(start: dict[str, Any], replaces_committed: bool, force: bool) -> dict[str, Any]:
    """The start record, with ``forced`` set; a one-line ``BadInput`` where a busy start would
    replace the committed results file without ``--force``."""
    if replaces_committed and not start["quiet"] and not force:
        raise BadInput(
            f"the run would start at a 1-minute load average of {start['load'][0]:.2f} (more than "
            f"{start['threshold']}): it does not replace the committed results; run it on a quiet machine, "
            "or pass --force (the file then says so)"
        )
    return {**start, "forced": bool(force and not start["quiet"])}
