"""The figures of the workbook read in a room: every verdict has a mark as well as a colour,
colours come from the Okabe-Ito palette (sizes and text for a projector: test_projector.py). The
matplotlib artists are inspected, not the pixels; expected marks are worked out by hand."""

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import pytest
import torch

from pp_demo.figures.palette import OKABE_ITO
from pp_demo.figures.pooling import draw_class_grid, draw_pad_eos_rows, draw_padding_table, draw_row_diffs
from pp_demo.verify.compare import RowComparison

PALETTE = {mcolors.to_rgb(c) for c in OKABE_ITO.values()}
GREYS = {mcolors.to_rgb(c) for c in ("white", "#999999", "#d9d9d9")}
VERDICT_COLOURS = {mcolors.to_rgb(OKABE_ITO[name]) for name in ("bluish green", "vermillion")}


def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts] + [fig._suptitle] * (fig._suptitle is not None)


def _verdicts(fig):
    return [t.get_text() for t in _texts(fig) if t.get_gid() == "verdict"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_padding_grid_marks_every_cell_and_shows_the_rows_where_the_references_disagree():
    fig = draw_padding_table(rules=["first_pad", "rightmost_non_pad"])
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert "all_pad" in labels and "trailing_eos" in labels  # every case by default
    # by hand, judged by the true last real token (pad 0): first_pad's panel, then the fix's, per case;
    # a raw -1 is written with the position it reads, never next to a mark alone
    assert _verdicts(fig) == [
        "✓ -1 → 5",
        "✓ 3",
        "✓ -1 → 5",
        "✗ 0",
        "✓ -1 → 5",
        "- (-1 → 5)",
        "✗ 2",
        "✓ 5",
        "✓ 3",
        "✓ 5",
        "✓ 3",
        "✓ 5",
        "- (0)",
        "✗ 2",
    ]
    edges = {p.get_edgecolor()[:3] for ax in fig.axes for p in ax.patches if not p.get_fill()}
    assert edges <= PALETTE | GREYS and mcolors.to_rgb(OKABE_ITO["vermillion"]) in edges


def test_pad_eos_figure_tells_a_real_eos_from_padding_and_judges_by_the_mask():
    ids = torch.tensor([[9, 8, 7, 0], [5, 0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    fig = draw_pad_eos_rows(ids, mask, 0, ["a", "b"])
    # rightmost_non_pad: 2 on row 0 (eos at 3 is real), 0 on row 1 (true last 1); the mask rule: 3 and 1
    assert _verdicts(fig) == ["✗ 2", "✗ 0", "✓ 3", "✓ 1"]  # one panel per rule
    sky = mcolors.to_rgb(OKABE_ITO["sky blue"])
    real_pad_ids = [p for ax in fig.axes for p in ax.patches if p.get_fill() and p.get_facecolor()[:3] == sky]
    assert len(real_pad_ids) == 2 * 2  # two real tokens with the pad id, once per rule panel


def test_difference_bars_are_on_a_log_scale_with_the_tolerance_and_a_mark_per_bar():
    comparisons = {
        ("llama", "count"): RowComparison([False, True], [0.05, 0.0], 1e-6),
        ("llama", "rightmost_non_pad"): RowComparison([True, True], [0.0, 2e-7], 1e-6),
    }
    fig = draw_row_diffs(comparisons, ["left", "right"])
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert [line.get_ydata()[0] for line in ax.lines] == [1e-6]  # the tolerance line
    assert _verdicts(fig) == ["✗", "✓", "✓", "✓"]
    bars = {p.get_facecolor()[:3] for p in ax.patches}
    assert len(bars) == 2 and bars <= PALETTE and not bars & VERDICT_COLOURS  # a green bar would read as right
    assert sorted(p.get_height() for p in ax.patches) == [2e-7, 0.05]  # no bar for an exact 0 ...
    zeros = [t for t in ax.texts if t.get_text() == "0"]  # ... but a 0 written where it would stand
    assert len(zeros) == 2 and not {mcolors.to_rgb(t.get_color()) for t in zeros} & VERDICT_COLOURS


def test_the_difference_key_names_only_what_is_drawn():
    # the fix is exact on both rows: it draws two 0s and no bar; nothing is within-but-wrong
    comparisons = {
        ("llama", "count"): RowComparison([False, True], [0.05, 0.0], 1e-6),
        ("llama", "rightmost_non_pad"): RowComparison([True, True], [0.0, 0.0], 1e-6),
    }
    fig = draw_row_diffs(comparisons, ["left", "right"])
    (legend,) = fig.legends
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels == [
        "rule count: 0 where exact",
        "rule rightmost_non_pad: 0 where exact",
        "tolerance 1e-06",
        "within 1e-06 of model.forward",
        "not within",
    ]
    assert {p.get_height() for p in fig.axes[0].patches} == {0.05}  # the one bar: the count rule's
    all_right = {key: RowComparison([True, True], [0.0, 3e-7], 1e-6) for key in comparisons}
    labels = [text.get_text() for text in draw_row_diffs(all_right, ["left", "right"]).legends[0].get_texts()]
    assert "not within" not in labels and labels[0] == "rule count: 0 where exact"


def test_class_grid_marks_each_cell():
    fig = draw_class_grid()
    marks = _verdicts(fig)
    assert marks[0] == "✗ 3" and "✓ 2,3,7" in marks  # count on left; known_lengths, packed
    fills = {p.get_facecolor()[:3] for p in fig.axes[0].patches}
    assert fills <= PALETTE | GREYS


def test_the_study_figures_take_every_colour_from_the_palette():
    import inspect
    import re

    from pp_demo.figures import study
    from pp_demo.figures.palette import TARGET_LINE
    from pp_demo.training.study import RUNS

    assert set(RUNS) | {"model.forward"} <= set(study.RUN_STYLES)  # a style for every run drawn
    colours = [colour for colour, _ in study.RUN_STYLES.values()]
    assert {mcolors.to_rgb(c) for c in colours} <= PALETTE and len(set(colours)) == len(colours)
    assert not re.search(r"[\"']#[0-9a-fA-F]{6}[\"']", inspect.getsource(study))  # no colour of its own
    fig = study.draw_one_seed_curves(
        {"model.forward": [1.1, 0.6], "count": [1.1, 1.0], "fix": [1.1, 0.5]},
        {"count": [[1, 0.3, 0.4], [2, 0.35, 0.4]], "fix": [[1, 0.8, 0.9], [2, 0.95, 1.0]]},
    )
    drawn = {mcolors.to_rgb(line.get_color()) for ax in fig.axes for line in ax.lines}
    assert drawn <= PALETTE | GREYS | {mcolors.to_rgb(TARGET_LINE)}
