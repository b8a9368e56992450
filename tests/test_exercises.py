"""The exercise convention: one status line, never an exception, answers tested here."""

import pytest
import torch

from pp_demo.exercises import EXERCISES, check, status
from pp_demo.solutions import SOLUTIONS


def test_every_exercise_has_a_reference_solution():
    assert set(SOLUTIONS) == set(EXERCISES)


@pytest.mark.parametrize("key", sorted(SOLUTIONS))
def test_reference_solution_is_correct(key, capsys):
    assert check(key, SOLUTIONS[key]) is None   # the cell shows the printed line only
    assert capsys.readouterr().out == f"[{key}] correct\n"


@pytest.mark.parametrize("key", sorted(SOLUTIONS))
def test_an_unfilled_stub_is_not_attempted(key):
    assert status(key, ...) == "not attempted yet"


def test_a_function_stub_returning_ellipsis_is_not_attempted():
    assert status("01.1", lambda ids, pad: ...) == "not attempted yet"


@pytest.mark.parametrize("key, wrong, counterexample", [
    ("01.1", lambda ids, pad: (ids != pad).sum(-1) - 1, "on left [0,0,5,6,7,8] your rule pools 3"),
    ("01.1", lambda ids, pad: ids.shape[-1] - 1 - (ids != pad).flip(-1).int().argmax(-1),
     "on all_pad"),
    ("01.2", "left", "first_pad_mod pools 5"),
    ("01.2", "trailing_eos", "not one of the review table's rows"),
    ("01.3", 5, "is not what the count rule pools"),
    ("01.3", "2", "as an int"),
])
def test_a_wrong_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_an_answer_that_raises_is_reported_not_raised():
    def broken(ids, pad):
        raise RuntimeError("typo")
    assert status("01.1", broken) == "not yet: your answer raised RuntimeError: typo"


def test_an_unknown_exercise_is_reported_not_raised():
    assert status("99.9", 1).startswith("no exercise '99.9'")


def test_the_forward_rule_solution_is_not_the_packaged_rule_by_accident():
    # the solution must pool 0 on an all-pad row, as model.forward does
    assert SOLUTIONS["01.1"](torch.zeros(1, 4, dtype=torch.long), 0).tolist() == [0]
