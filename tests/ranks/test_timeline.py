"""Schedules placed in time, the activations each rank holds, and the timeline figure's marks."""

import matplotlib.colors as mcolors
import pytest
from matplotlib.patches import Rectangle

from pp_demo.figures.palette import OKABE_ITO
from pp_demo.figures.schedules import draw_timeline
from pp_demo.ranks.schedules import (
    gpipe_slots,
    peak_in_flight,
    schedule_order,
    timeline,
)


def test_gpipe_on_two_stages_fills_then_drains_backwards_in_micro_batch_order():
    # stage 1 starts F0 once stage 0 finished it; B<i> on stage 0 waits for B<i> on stage 1
    assert timeline("gpipe", 2, 2) == [
        (0, 0, "F0"),
        (0, 1, "F1"),
        (0, 4, "B0"),
        (0, 5, "B1"),
        (1, 1, "F0"),
        (1, 2, "F1"),
        (1, 3, "B0"),
        (1, 4, "B1"),
    ]


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p, m", [(2, 4), (3, 4), (3, 6)])
def test_a_step_lasts_twice_m_plus_p_minus_1_slots_with_no_stage_doing_two_things_at_once(kind, p, m):
    slots = timeline(kind, p, m)
    assert max(slot for _, slot, _ in slots) + 1 == 2 * (m + p - 1)
    assert len({(stage, slot) for stage, slot, _ in slots}) == len(slots) == 2 * p * m


@pytest.mark.parametrize("p, m", [(2, 4), (3, 4), (3, 8)])
def test_gpipe_holds_every_micro_batch_and_1f1b_at_most_p_minus_stage(p, m):
    assert [peak_in_flight(ops) for ops in schedule_order("gpipe", p, m)] == [m] * p
    assert [peak_in_flight(ops) for ops in schedule_order("1f1b", p, m)] == [p - s for s in range(p)]


def test_the_exercise_slots_keep_their_shape_forwards_only_unless_asked():
    assert gpipe_slots(2) == [(0, 0, "F", 0), (0, 1, "F", 1), (1, 1, "F", 0), (1, 2, "F", 1)]
    assert len(gpipe_slots(2, backward=True)) == 8


def _boxes(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]


@pytest.mark.parametrize("kind, p, m", [("gpipe", 2, 4), ("1f1b", 3, 4)])
def test_the_timeline_has_one_labelled_box_per_op_backwards_hatched_in_the_okabe_ito_palette(kind, p, m):
    fig = draw_timeline(kind, p, m)
    boxes = _boxes(fig)
    texts = [t for t in fig.axes[0].texts]
    labels = sorted(t.get_text() for t in texts if t.get_text()[:1] in "FB")
    assert labels == sorted([f"{x}{i}" for x in "FB" for i in range(m)] * p)
    assert sum(b.get_hatch() is not None for b in boxes) == p * m == sum(b.get_hatch() is None for b in boxes)
    palette = {mcolors.to_hex(c) for c in OKABE_ITO.values()}
    assert {mcolors.to_hex(b.get_facecolor()) for b in boxes} <= palette
    assert [t.get_text() for t in texts if t.get_text().startswith("holds")] == [
        f"holds ≤ {m if kind == 'gpipe' else p - s}" for s in range(p)
    ]
    # sizes for a projector: tests/figures/test_projector.py


def test_an_unknown_schedule_is_one_clear_error():
    with pytest.raises(ValueError, match="a schedule is 'gpipe' or '1f1b', got 'zb'"):
        draw_timeline("zb", 2, 4)
