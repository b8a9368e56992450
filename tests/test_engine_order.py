"""The order ``pp_demo.schedules`` writes down is the one the engine runs: recorded by hooks
on each rank's stage during a real training step (gloo ranks, two and three)."""

import pytest

from pp_demo.engine_probes import OrderProbe
from pp_demo.runner import run
from pp_demo.schedules import schedule_order

CASES = [(kind, p, m) for p in (2, 3) for kind in ("gpipe", "1f1b") for m in (p, 5)]


@pytest.fixture(scope="module")
def recorded():
    results = run([OrderProbe(kind, p, m) for kind, p, m in CASES], on="ranks", timeout_s=300)
    return dict(zip(CASES, results))


@pytest.mark.parametrize("kind, p, m", CASES)
def test_each_rank_runs_its_forwards_and_backwards_in_the_written_order(recorded, kind, p, m):
    assert recorded[kind, p, m] == schedule_order(kind, p, m)
