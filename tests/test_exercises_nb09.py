"""Notebook 09's exercises: the reference answer is correct, plausible wrong ones get a reason."""

import pytest

from pp_demo.exercises import status
from pp_demo.solutions import SOLUTIONS


@pytest.mark.parametrize("key", ["09.1", "09.2"])
def test_the_reference_answer_is_correct(key):
    assert status(key, SOLUTIONS[key]) == "correct"


@pytest.mark.parametrize(
    "key, wrong, reason",
    [
        # only the pad inside: forgets the rows padded on both sides
        ("09.1", [3], "row 1 [0,5,6,7,0,0]: the first-pad form pools 5, model.forward 3"),
        # every row holding a pad after a real token, the review's rule of thumb taken literally
        ("09.1", [0, 1, 3, 4, 5], "row 0 [5,6,0,0,0,0]: the first-pad form pools 1, model.forward 1"),
        ("09.1", "1, 3", "as a list of ints"),
        # the PR's sentence about the old code in all three files, applied to one missing file
        ("09.2", {("llama", "left"), ("qwen2", "left"), ("opt", "left")}, "llama with left padding passes"),
        # both sides of the unpatched file
        ("09.2", {("qwen2", "left"), ("qwen2", "right")}, "qwen2 with right padding passes"),
        ("09.2", {("gpt2", "left")}, "is not a pair"),
    ],
)
def test_a_wrong_answer_gets_a_reason(key, wrong, reason):
    text = status(key, wrong)
    assert text.startswith("not yet:") and reason in text, text


def test_an_unfilled_stub_is_not_attempted():
    assert status("09.1", ...) == "not attempted yet"
