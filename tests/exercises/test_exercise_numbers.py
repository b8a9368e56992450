"""Judges compare values, whatever the number's type, and say when the type is wrong.

A right answer of another numeric type (a fraction, a numpy or torch scalar, a 0-d
tensor, a decimal) is right; an answer of the wrong type (text, a list) is told it is the type, in
one line, not sent back to redo the arithmetic; an ``int`` whose ``__eq__`` says True to anything is
judged by its value; a rule returning a meta tensor is told so, not that it raised; an answer
calling ``os._exit`` gets a line and leaves the process running.
"""

import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch

import pp_demo.exercises  # noqa: F401  (files every exercise)
from pp_demo.exercises.core import plain_int, plain_number, status


# 10.2's bubble fraction of a GPipe step, forwards only: p - 1 idle slots of m + p - 1 (the question)
@pytest.mark.parametrize(
    "as_type",
    [
        lambda idle, slots: Fraction(idle, slots),
        lambda idle, slots: np.float32(idle / slots),
        lambda idle, slots: np.float64(idle / slots),
        lambda idle, slots: torch.tensor(idle / slots),
        lambda idle, slots: torch.tensor(idle / slots, dtype=torch.float64),
        lambda idle, slots: Decimal(idle) / Decimal(slots),
    ],
    ids=["Fraction", "numpy.float32", "numpy.float64", "0-d tensor", "float64 tensor", "Decimal"],
)
def test_a_right_bubble_fraction_of_any_number_type_is_correct(as_type):
    assert status("10.2", lambda m, p: as_type(p - 1, m + p - 1)) == "correct"


@pytest.mark.parametrize(
    "answer, said",
    [
        (lambda m, p: str((p - 1) / (m + p - 1)), "your answer is text ('0.5', a str), not a number"),
        (lambda m, p: [(p - 1) / (m + p - 1)], "your answer is a list, not a number"),
        (lambda m, p: torch.tensor([0.5]), "your answer is a tensor of shape (1,), not one number"),
        (lambda m, p: True, "your answer is True, a bool, not a number"),
    ],
    ids=["str", "list", "1-element tensor", "bool"],
)
def test_a_bubble_fraction_of_the_wrong_type_is_told_the_type_not_the_arithmetic(answer, said):
    line = status("10.2", answer)
    assert line.startswith(f"not yet: for m=1, p=2: {said}")  # m=1, p=2 is the first the judge asks
    assert "draw that step" not in line and "\n" not in line


def test_a_wrong_bubble_fraction_of_another_type_is_still_wrong():
    assert "draw that step" in status("10.2", lambda m, p: Fraction(p, m + p - 1))
    assert "draw that step" in status("10.2", lambda m, p: torch.tensor((p - 1) / m))


class AlwaysEqual(int):
    """An int that says it equals anything."""

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


# the right answers, from the questions: 01.3 counts 5 non-pad ids minus one (4); 04.3's first pad
# id is at 2, one before is 1; 10.1 stage 0 idles 1 slot each way of a 10-slot step (2)
RIGHT = {"01.3": 4, "04.3": 1, "10.1": 2}


@pytest.mark.parametrize("key", RIGHT)
def test_an_int_whose_eq_says_true_is_judged_by_its_value(key):
    assert status(key, AlwaysEqual(99)).startswith("not yet: ")
    assert status(key, AlwaysEqual(RIGHT[key])) == "correct"


@pytest.mark.parametrize("key", RIGHT)
@pytest.mark.parametrize(
    "as_type", [np.int64, np.int32, torch.tensor, lambda n: np.array(n)], ids=["int64", "int32", "tensor", "0-d array"]
)
def test_a_right_int_answer_of_another_integer_type_is_correct(key, as_type):
    assert status(key, as_type(RIGHT[key])) == "correct"


@pytest.mark.parametrize("key", RIGHT)
def test_an_int_answer_as_text_or_a_list_is_told_the_type(key):
    text = status(key, str(RIGHT[key]))
    assert (
        text.startswith(f"not yet: your answer is text ('{RIGHT[key]}', a str), not a number") and "as an int" in text
    )
    assert status(key, [RIGHT[key]]).startswith("not yet: your answer is a list, not a number")


def test_the_conversions_give_plain_python_values():
    assert type(plain_int(AlwaysEqual(3))) is int and plain_int(AlwaysEqual(3)) == 3
    assert type(plain_number(np.float32(0.5))) is float and plain_number(Fraction(1, 4)) == 0.25
    assert plain_number(torch.tensor(2, dtype=torch.int8)) == 2.0


META = "your answer returned a meta tensor (shapes only, no values): compute it on a real device, e.g. cpu"


@pytest.mark.parametrize(
    "key, rule",
    [
        ("01.1", lambda ids, pad: torch.empty(ids.shape[0], dtype=torch.long, device="meta")),
        ("04.2", lambda ids, mask, pad: torch.empty(ids.shape[0], dtype=torch.long, device="meta")),
        ("06.3", lambda mask: torch.empty(*mask.shape, mask.shape[1], dtype=torch.bool, device="meta")),
        ("10.2", lambda m, p: torch.tensor(0.5, device="meta")),
    ],
)
def test_a_rule_returning_a_meta_tensor_is_told_so_not_that_it_raised(key, rule):
    line = status(key, rule)
    assert line.startswith("not yet: ") and line.endswith(META) and "raised" not in line


def test_an_answer_calling_os_exit_is_a_line_and_the_script_goes_on(tmp_path):
    script = tmp_path / "answer.py"
    script.write_text(
        "import os\nfrom pp_demo.exercises import check\n"
        "check('10.2', lambda m, p: os._exit(0))\nprint('after the check')\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=os.environ)
    assert done.stdout.splitlines() == [  # the check's line, wrapped at a word, then the script's
        "[10.2] not yet: your answer called os._exit(0), which ends the kernel's process:",
        "  return a value",
        "after the check",
    ]
    assert done.returncode == 0 and done.stderr == ""


def test_os_exit_is_itself_again_after_the_check():
    original = os._exit
    status("10.2", lambda m, p: os._exit(3))
    assert os._exit is original
