"""Judges of notebooks 01, 03, 04, 06, 07 and 08 against a right answer, plausible wrong
ones and the shortcuts (a line copied from the notebook, the package's own rule). Expected
verdicts are worked out by hand from the rows and the definitions, not by the judges' code."""

import random

import pytest
import torch

from pp_demo import rules
from pp_demo.exercises import forget_attempts, nb06, status


@pytest.fixture(autouse=True)
def _first_attempt():
    forget_attempts()


def _fix_by_hand(ids, pad):
    # rightmost non-pad position, written with a flip (not the package's expression); 0 when none
    flipped = (ids != pad).flip(-1).int()
    return torch.where(flipped.any(-1), ids.shape[-1] - 1 - flipped.argmax(-1), 0)


def _mask_rule_by_hand(ids, mask, pad):
    return torch.tensor([max((i for i, m in enumerate(row) if m), default=0) for row in mask.tolist()])


def _causal_by_hand(mask):
    length = mask.shape[-1]
    return torch.tensor(
        [[[j <= i and row[j] == 1 for j in range(length)] for i in range(length)] for row in mask.tolist()]
    )


RIGHT = [
    ("01.1", _fix_by_hand),
    ("01.2", "right_pad_in_content"),
    ("01.3", 2),
    ("03.1", [True, False]),
    ("03.2", [False, False]),
    ("03.3", [4, 1, 3]),
    ("04.1", {3, 0}),
    ("04.2", _mask_rule_by_hand),
    ("04.3", 1),
    ("06.1", [2, 1]),
    ("06.2", [0, 1, 2, 3]),
    ("06.3", _causal_by_hand),
    ("07.1", "c"),
    ("07.2", ([3, 4, 5, 1, 1], [1, 1, 1, 0, 0])),
    ("08.1", [(3, 4), (0, 4), (2, 1), (2, 4)]),
    ("08.2", ("first_pad", "count")),
]


@pytest.mark.parametrize("key, answer", RIGHT)
def test_a_right_answer_written_independently_is_correct(key, answer):
    assert status(key, answer) == "correct"


WRONG = [  # two plausible wrong answers per exercise: the slip a reader makes, with its counterexample
    ("01.1", lambda ids, pad: (ids != pad).sum(-1) - 1, "your rule pools 3, model.forward pools 5"),
    ("01.1", lambda ids, pad: (ids == pad).int().argmax(-1) - 1, "row 3 [5,0,7,8,0,0]"),
    ("01.2", "left", "lands on the true last real token"),
    ("01.2", "left_pad_in_content", "lands on the true last real token"),
    ("01.3", 5, "that is the true last real token"),
    ("01.3", 3, "is not what the count rule pools"),
    ("03.1", [False, True], "row 0 [5,6,7,8,0,0]: the count rule pools 3, model.forward pools 3 too"),
    ("03.1", [True, True], "row 1 [0,0,5,6,7,8]: the count rule pools 3, model.forward pools 5"),
    ("03.2", [True, False], "row 0 [0,0,5,6,7,8]: the count rule pools 3, model.forward pools 5"),
    ("03.2", [False, True], "row 1 [0,5,6,7,8,9]: the count rule pools 4, model.forward pools 5"),
    ("03.3", [1, 3], "row 4 [5,6,0,7,0,0]: the count rule pools 2, model.forward pools 3"),
    ("03.3", [1, 2, 3, 4], "row 2 [9,0,0,0,0,0]: the count rule pools 0, model.forward pools 0 too"),
    ("04.1", [0], "row 3 [5,6,0,0] with mask [1,1,1,0]: rightmost_non_pad pools 1, the true last real token is 2"),
    ("04.1", [0, 2, 3], "row 2 [5,0,6,0] with mask [1,1,1,0]: rightmost_non_pad pools 2, and that is"),
    (
        "04.2",
        lambda ids, mask, pad: _fix_by_hand(ids, pad),
        "on trailing_eos [5,6,7,0] (mask [1,1,1,1]) your rule pools 2, the true last real token is 3",
    ),
    ("04.2", lambda ids, mask, pad: mask.sum(-1) - 1, "on left [0,0,5,6,7,8] (mask [0,0,1,1,1,1]) your rule pools 3"),
    ("04.3", 4, "4 is where rightmost_non_pad pools"),
    ("04.3", 5, "5 is the true last real token"),
    ("06.1", [1], "row 2 [0,5,6,7,0,0]: first_pad_mod pools 5, model.forward pools 3"),
    ("06.1", [0, 1, 2], "row 0 [0,0,5,6,7,8]: first_pad_mod pools 5, model.forward pools 5 too"),
    ("06.2", [0, 1, 2, 3, 4, 5], "[4, 5] are padding"),
    ("06.2", [1, 2, 3], "leaves out [0]"),
    (
        "06.3",
        lambda mask: torch.ones(mask.shape[0], mask.shape[1], mask.shape[1], dtype=torch.bool).tril(),
        "position 0 may attend to position 0 in your mask, but 0 is padding",
    ),
    ("06.3", lambda mask: mask.bool()[:, None, :].expand(-1, mask.shape[1], -1), "but 2 is a later position"),
    ("07.1", "d", "on trailing_eos [5,6,7,0] class d (rightmost_attended) pools 3, the expression 2"),
    ("07.1", "b", "on right_pad_in_content [5,0,7,8,0,0] class b (first_pad_mod) pools 0, the expression 3"),
    ("07.2", "right_pad_in_content", "both pool 3"),
    ("07.2", ([0, 0, 5], [0, 0, 1]), "both pool 2"),
    ("07.2", "trailing_eos", "the trailing-eos row"),  # the row notebook 07 shows
    (
        "08.1",
        [(0, 4), (1, 4), (2, 1), (3, 4)],
        "row 0 [5,6,7,8,9]: first_pad gives -1, so the flat index is 0 * 5 + (-1)",
    ),
    ("08.1", [(3, 4), (0, 4), (2, 1), (3, 4)], "row 3 [0,0,0,5,6]: first_pad gives -1"),
    ("08.2", ["first_pad"], "on [0] (pad id 0) count gives -1"),
    ("08.2", ["count", "first_pad", "rightmost_non_pad"], "rightmost_non_pad never goes below 0"),
]


@pytest.mark.parametrize("key, answer, counterexample", WRONG)
def test_a_plausible_wrong_answer_gets_its_counterexample(key, answer, counterexample):
    text = status(key, answer)
    assert text.startswith("not yet:") and counterexample in text, text


def _fix_copied(ids, pad):
    positions = torch.arange(ids.shape[-1])
    return (positions * (ids != pad)).argmax(-1)


SHORTCUTS = [  # calling the package's rule, or copying what the notebook printed nearby
    ("01.1", _fix_copied, "multiplies by arange, the expression printed above"),
    ("01.1", lambda ids, pad: rules.rightmost_non_pad(ids, pad), "calls pp_demo.rules.rightmost_non_pad"),
    (
        "01.1",
        lambda ids, pad: rules.pooled_positions("rightmost_non_pad", input_ids=ids, pad_token_id=pad),
        "calls pp_demo.rules.rightmost_non_pad",
    ),
    ("01.1", lambda ids, pad: _fix_by_hand(ids[:1], pad).expand(ids.shape[0]), "row 1"),  # row 0's answer for all
    ("01.3", 3, "is not what the count rule pools"),  # notebook 01 prints count - 1 = 3 for the left row
    ("03.1", [False, True], "row 0 [5,6,7,8,0,0]"),  # the reproduction line notebook 03 prints for [left, right]
    ("03.2", [False, True], "row 1 [0,5,6,7,8,9]"),  # the same line, copied
    ("04.1", [0, 1, 2, 3, 4], "row 1 [0,0,5,6]"),  # every row with a pad id in it
    ("04.2", lambda ids, mask, pad: rules.rightmost_attended(mask), "calls pp_demo.rules.rightmost_attended"),
    ("06.1", [3], "row 1 [5,6,0,7,0,0]"),  # notebook 06's prediction for its own batch
    ("06.2", [0, 1], "is causal attention"),
    ("08.1", [(2, 5), (1, 3), (1, 5)], "a list of 4"),  # notebook 08's printed line for its own batch
]


@pytest.mark.parametrize("key, answer, problem", SHORTCUTS)
def test_a_shortcut_is_not_correct(key, answer, problem):
    text = status(key, answer)
    assert text.startswith("not yet:") and problem in text, text


@pytest.mark.parametrize("key, answer", [("03.3", [0]), ("04.1", [1]), ("06.1", [0]), ("08.1", [(0, 0)] * 4)])
def test_only_the_first_wrong_attempt_gets_a_counterexample(key, answer):
    first, second = status(key, answer), status(key, answer)
    assert first.startswith("not yet: row ") and "still" not in first
    assert second.startswith("not yet:") and "still misjudged" in second and "[" not in second


def test_the_package_rules_are_back_after_judging():
    status("01.1", lambda ids, pad: rules.rightmost_non_pad(ids, pad))
    ids = torch.tensor([[0, 5, 6]])
    assert rules.rightmost_non_pad(ids, 0).tolist() == [2]
    assert rules.pooled_positions("count", input_ids=ids, pad_token_id=0).tolist() == [1]


def test_the_06_3_judge_is_written_from_the_definition_not_the_solution():
    # the judge's entry-by-entry definition, against masks drawn at random and one flipped entry
    pick = random.Random(0)
    for _ in range(5):
        mask = torch.tensor([[pick.choice((0, 1)) for _ in range(5)] for _ in range(3)])
        want = _causal_by_hand(mask)
        assert nb06._first_wrong_entry(want, mask) is None
        flipped = want.clone()
        flipped[1, 3, 2] = ~flipped[1, 3, 2]
        assert nb06._first_wrong_entry(flipped, mask) == (1, 3, 2)


def test_the_08_1_model_of_the_legacy_exporter_gives_what_notebook_08_measured():
    from pp_demo.exercises import nb08

    # notebook 08 runs first_pad through the legacy export on [left, right, unpadded] and
    # prints the (row, position) each row reads: [(2, 5), (1, 3), (1, 5)]
    batch = ((0, 0, 5, 6, 7, 8), (5, 6, 7, 8, 0, 0), (5, 6, 7, 8, 9, 10))
    assert [nb08._legacy_reads(batch, b) for b in range(3)] == [(2, 5), (1, 3), (1, 5)]


def test_a_value_answer_judge_may_use_the_package_rules():
    # only the exercises whose answer is a rule refuse pp_demo.rules; others judge as before
    from pp_demo.exercises import EXERCISES

    assert {k for k, e in EXERCISES.items() if e.refuse_package_rules} == {"01.1", "04.2", "06.3"}
