"""The padding table names its reference and judges each cell by it alone."""

import matplotlib
import pytest

from pp_demo.figures.pooling import draw_padding_table
from pp_demo.pooling.padding_table import format_padding_table, padding_table


def _marks(reference):
    return {(c.case, c.rule): c.right for row in padding_table(reference=reference) for c in row}


def test_judged_by_the_true_last_real_token():
    marks = _marks("true_last")
    # review table: count wrong on left padding and on both pad-in-content rows
    assert [marks["left", "count"], marks["right", "count"]] == [False, True]
    assert marks["right_pad_in_content", "first_pad_mod"] is False
    assert marks["left_pad_in_content", "first_pad_mod"] is True
    # only the attention mask finds the real eos that ends a row
    assert [
        marks["trailing_eos", r]
        for r in ["count", "first_pad_mod", "first_pad", "rightmost_non_pad", "rightmost_attended"]
    ] == [False, False, False, False, True]
    # the all-pad row has no real token: no verdict
    assert {marks["all_pad", r] for r in ["count", "rightmost_attended"]} == {None}


def test_judged_by_model_forward():
    marks = _marks("forward")
    assert marks["trailing_eos", "rightmost_non_pad"] is True
    assert marks["trailing_eos", "rightmost_attended"] is False
    assert marks["all_pad", "count"] is False  # -1 reads position 5, forward pools 0
    assert marks["all_pad", "rightmost_non_pad"] is True


def test_the_printed_table_says_which_reference_it_judges_by():
    assert format_padding_table(reference="true_last").startswith("judged by the true last real token")
    assert format_padding_table(reference="forward").startswith("judged by the position model.forward pools")


def test_printed_cells_show_the_raw_position_and_mark():
    lines = format_padding_table(rules=["count", "first_pad"], cases=["left"]).splitlines()
    assert lines[-1].split()[-4:] == ["3", "✗", "-1", "✓"]


def test_unknown_reference_is_refused():
    with pytest.raises(ValueError, match="unknown reference"):
        padding_table(reference="last")


def test_the_figure_draws_one_outlined_cell_per_rule_and_case():
    fig = draw_padding_table(rules=["count", "rightmost_non_pad"], cases=["left", "right"])
    patches = [p for ax in fig.axes for p in ax.patches]
    outlined = [p for p in patches if not p.get_fill()]
    assert len(outlined) == 4
    red = [p for p in outlined if p.get_edgecolor()[:3] == matplotlib.colors.to_rgb("#D55E00")]  # Okabe-Ito vermillion
    assert len(red) == 1  # count on the left-padded row


def test_the_padding_table_and_the_class_grid_are_one_grid_transposed():
    # one cell type for both: the class grid's padding cases hold the table's verdicts
    from pp_demo.pooling.packed import class_grid

    table = padding_table(reference="true_last")
    grid = class_grid(rules=[cell.rule for cell in table[0]], packed=None)
    assert [[grid[j][i] for j in range(len(grid))] for i in range(len(table))] == table


def test_one_mark_per_verdict_right_wrong_or_no_answer():
    from pp_demo.pooling.padding_table import mark

    assert (mark(True), mark(False), mark(None)) == ("✓", "✗", "-")


def test_two_line_headings_cut_where_the_halves_balance():
    from pp_demo.pooling.padding_table import two_line_heading

    assert two_line_heading("count") == ("", "count")
    assert two_line_heading("first_pad_mod") == ("first_", "pad_mod")
    assert two_line_heading("rightmost_non_pad") == ("rightmost", "_non_pad")
    assert two_line_heading("true last") == ("true", "last")
    assert two_line_heading("unpadded") == ("", "unpadded")


@pytest.mark.parametrize("reference", ["true_last", "forward"])
def test_the_printed_table_fits_a_projector_and_keeps_every_rule(reference):
    from pp_demo.core import CORE_RULES
    from pp_demo.pooling.padding_table import two_line_heading
    from pp_demo.pooling.positions import PADDED_RULES
    from pp_demo.pooling.survey import PROJECTOR_WIDTH

    for rules, blocks in ((CORE_RULES, 1), (PADDED_RULES, 2)):
        lines = format_padding_table(rules=rules, reference=reference).splitlines()
        assert max(len(line) for line in lines) <= PROJECTOR_WIDTH
        assert sum(line.startswith("left ") for line in lines) == blocks  # the rules in blocks, each row again
        tops = [line for line in lines if line.startswith(" ")]
        bottoms = [line for line in lines if line.startswith("case ")]
        for rule in rules:
            top, bottom = two_line_heading(rule)
            assert any(top in t and bottom in b for t, b in zip(tops, bottoms, strict=True)), rule
