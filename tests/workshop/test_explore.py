"""The explorer on the review table's rows (expected values from the pull request's review
table, pad 0, length 6) and on bad rows, as a function, as HTML and from the CLI."""

import pytest

from pp_demo.cli import main
from pp_demo.core import PaddingCase
from pp_demo.figures.pooling import draw_padding_table
from pp_demo.pooling.padding_table import format_padding_table
from pp_demo.pooling.positions import PADDED_RULES
from pp_demo.pooling.survey import PROJECTOR_WIDTH
from pp_demo.workshop.explorer import exploration_html, explore, explorer_box, format_exploration, parse_row

# row, mask -> (count, first_pad_mod, rightmost_non_pad) as the review table gives them,
# and the last real token (the rightmost 1 of the mask)
REVIEW = [
    ((0, 0, 5, 6, 7, 8), (0, 0, 1, 1, 1, 1), (3, 5, 5), 5),
    ((5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), (3, 3, 3), 3),
    ((0, 0, 5, 0, 7, 8), (0, 0, 1, 1, 1, 1), (2, 5, 5), 5),
    ((5, 0, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), (2, 0, 3), 3),
]


@pytest.mark.parametrize("ids, mask, expected, true_last", REVIEW, ids=["left", "right", "left_eos", "right_eos"])
def test_review_rows(ids, mask, expected, true_last):
    result = explore(ids, mask)
    lands = result.lands_on
    assert (lands["count"], lands["first_pad_mod"], lands["rightmost_non_pad"]) == expected
    assert result.case.true_last == true_last
    assert result.case.forward_pools == expected[2]  # model.forward pools where the fix does
    for rule in ("rightmost_attended", "attended_flip", "attended_cumsum"):
        assert lands[rule] == true_last


def test_every_rule_but_the_packed_one_runs():
    assert set(explore("1 2 3").positions) == set(PADDED_RULES)
    assert "known_lengths" not in PADDED_RULES and len(PADDED_RULES) == 7


def test_rules_names_the_rules_the_explorer_offers():
    # notebook 01 offers the five core rules it teaches; the mask rule's other spellings
    # (attended_flip, attended_cumsum) wait for notebook 07
    core = ("count", "first_pad_mod", "first_pad", "rightmost_non_pad", "rightmost_attended")
    result = explore("5 0 7 8 0 0", "1 1 1 1 0 0", rules=core)
    assert [cell.rule for cell in result.cells] == list(core)
    assert result.lands_on == {
        "count": 2,
        "first_pad_mod": 0,
        "first_pad": 0,
        "rightmost_non_pad": 3,
        "rightmost_attended": 3,
    }
    text = format_exploration(result)
    assert "attended_flip" not in text and "attended_cumsum" not in text
    html = exploration_html("5 0 7 8 0 0", "1 1 1 1 0 0", rules=core)
    assert "rightmost_attended" in html and "attended_flip" not in html
    assert list(explore("1 2 3", rules=["first_pad", "count"]).positions) == ["first_pad", "count"]


@pytest.mark.parametrize(
    "rules, problem", [(["known_lengths"], "pools packed batches"), ([], "at least one rule"), (["last"], "unknown")]
)
def test_rules_the_explorer_cannot_run_are_refused_in_one_line(rules, problem):
    with pytest.raises(ValueError, match=problem):
        explore("1 2 3", rules=rules)
    assert "cannot explore this row" in exploration_html("1 2 3", rules=rules)


def test_the_explorer_box_stores_one_short_line_of_text():
    widgets = pytest.importorskip("ipywidgets")
    box = explorer_box(widgets.Text(value="5 0 7 8 0 0", description="token ids"), widgets.HTML("x"))
    assert isinstance(box, widgets.VBox) and len(box.children) == 2
    text = box._repr_mimebundle_()["text/plain"]
    assert len(text) <= PROJECTOR_WIDTH and "\n" not in text


def test_positions_stay_raw_the_unwrapped_first_pad_says_minus_one():
    result = explore([0, 0, 5, 6, 7, 8], [0, 0, 1, 1, 1, 1])
    assert result.positions["first_pad"] == -1 and result.lands_on["first_pad"] == 5


def test_default_mask_is_all_ones_so_a_trailing_eos_is_real():
    # [5,6,7,0] ending in a real eos equal to pad: true last 3, model.forward 2
    result = explore("5 6 7 0")
    assert result.case.attention_mask == (1, 1, 1, 1)
    assert (result.case.true_last, result.case.forward_pools) == (3, 2)


def test_all_pad_row_has_no_true_last_and_forward_pools_zero():
    result = explore("0 0 0 0 0 0", "0 0 0 0 0 0")
    assert result.case.true_last is None and result.case.forward_pools == 0


def test_another_pad_id_moves_the_answer():
    # pad id 2: [5,6,7,8,2,2] is right-padded, the count rule is right (3)
    assert explore([5, 6, 7, 8, 2, 2], pad_token_id=2).positions["count"] == 3
    assert explore([5, 6, 7, 8, 2, 2], pad_token_id=0).positions["count"] == 5


def test_rows_typed_as_text():
    assert parse_row(" [0, 0,5 6] ") == (0, 0, 5, 6)
    assert parse_row("") == ()


@pytest.mark.parametrize(
    "ids, mask, pad, message",
    [
        ("", None, 0, "the row is empty"),
        ([], None, 0, "the row is empty"),
        ("0 0 x", None, 0, "whole numbers, got 'x'"),
        ([1, 2.5], None, 0, "whole numbers, got 2.5"),
        ("1 2 3", "1 1", 0, "the mask has length 2 but the row has 3"),
        ("1 2 3", "1 2 1", 0, "holds only 0"),
        ("1 -2", None, 0, "between 0 and"),
        ("1 2", None, -1, "the pad id must be"),
    ],
)
def test_bad_rows_get_one_line_errors(ids, mask, pad, message):
    with pytest.raises(ValueError, match=message) as error:
        explore(ids, mask, pad)
    assert "\n" not in str(error.value)


def test_html_shows_the_table_and_an_image_with_alt_text_or_the_error():
    page = exploration_html("5 0 7 8 0 0", "1 1 1 1 0 0")
    assert "model.forward pools (the fix, rightmost_non_pad): 3" in page
    assert '<img alt="Padding grid of the row [5,0,7,8,0,0]' in page and "data:image/png;base64," in page
    long = exploration_html(" ".join(["7"] * 40))
    assert "pools" in long and "<img" not in long and "not drawn" in long
    bad = exploration_html("5 x")
    assert "cannot explore this row" in bad and "<img" not in bad


def test_cli_prints_the_table_and_refuses_bad_rows(capsys):
    assert main(["explore", "0", "0", "5", "6", "7", "8", "--mask", "0", "0", "1", "1", "1", "1"]) == 0
    out = capsys.readouterr().out
    assert "true last real token (from the mask): 5" in out
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("count ")] == [["count", "3", "3"]]
    with pytest.raises(SystemExit) as exit_:
        main(["explore", "1", "2", "--mask", "1"])
    assert exit_.value.code == 2
    assert "the mask has length 1" in capsys.readouterr().err


def test_table_and_figure_accept_a_case_of_your_own():
    mine = PaddingCase("mine", (0, 5, 0, 7), (0, 1, 1, 1), 3, 3, "typed")
    text = format_padding_table(cases=[mine])
    assert "mine" in text and "[0,5,0,7]" in text
    fig = draw_padding_table(cases=[mine, "left"])
    assert len(fig.axes) == 5  # one panel per core rule, each with both rows
    assert [t.get_text() for t in fig.axes[0].texts if t.get_text() in ("mine", "left")] == ["mine", "left"]
