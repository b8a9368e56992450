"""Notebook 09's exercises: the reference answer is correct, plausible wrong ones get a reason."""

import json
from pathlib import Path

import pytest

from pp_demo.exercises import status
from pp_demo.exercises.solutions import SOLUTIONS


@pytest.mark.parametrize("key", ["09.1", "09.2"])
def test_the_reference_answer_is_correct(key):
    assert status(key, SOLUTIONS[key]) == "correct"


@pytest.mark.parametrize(
    "key, wrong, reason",
    [
        # only the pad inside: forgets the rows padded on both sides
        ("09.1", [3], "row 1 [0,5,6,7,0,0] is misjudged"),
        # every row holding a pad after a real token, the review's rule of thumb taken literally
        ("09.1", [0, 1, 3, 4, 5], "row 0 [5,6,0,0,0,0] is misjudged"),
        ("09.1", "1, 3", "as a list of ints"),
        # the two files without the change, on both sides
        (
            "09.2",
            {("llama", "left"), ("llama", "right"), ("opt", "left")},
            "your answer misjudges llama with right padding",
        ),
        ("09.2", {("gpt2", "left")}, "is not a pair"),
    ],
)
def test_a_wrong_answer_gets_a_reason(key, wrong, reason):
    text = status(key, wrong)
    assert text.startswith("not yet:") and reason in text, text


def test_an_unfilled_stub_is_not_attempted():
    assert status("09.1", ...) == "not attempted yet"


def test_the_09_2_answer_follows_from_what_colossalai_did_with_one_file_left_out():
    # verify-pr ran ColossalAI 0.5.0 with the change minus one file: only that family failed,
    # and only on the left. Applying the change to qwen2.py alone leaves out llama.py and opt.py.
    record = json.loads((Path(__file__).resolve().parents[2] / "results" / "verify_pr.json").read_text())
    measured = record["sdists"]["colossalai-0.5.0"]

    def failing(variant):
        matches = measured[variant]["matches model.forward"]
        sides = ("left", "right")
        return {(f, side) for f in ("llama", "qwen2", "opt") for side in sides if "F" in matches[f][f"{side}-padded"]}

    assert failing("change minus llama.py") == {("llama", "left")}
    assert failing("change minus opt.py") == {("opt", "left")}
    assert failing("change minus llama.py") | failing("change minus opt.py") == SOLUTIONS["09.2"]
