"""A wrong try is told why it is wrong with a row, never with the answer.

Over each exercise's recorded common wrong answers (its ``Exercise.wrong_answers``, the ones the
guide prints): the checker's message names a counterexample row (a list of ids, ``[0,0,5,6,7,8]``),
and holds neither the reference answer's value nor, for a function answer, its expression. The
notebooks listed in ``CHECKED`` are held to it; a notebook joins the list when its exercises do.
"""

import inspect
import re

import pytest

from pp_demo.exercises import EXERCISES, status

CHECKED = ("01", "02")
ROW = re.compile(r"\[-?\d+(,-?\d+)+\]")  # a row as the notebooks print it


def _tries():
    return [
        pytest.param(key, wrong.answer, id=f"{key}: {wrong.shown or wrong.answer!r}")
        for key, exercise in EXERCISES.items()
        if key[:2] in CHECKED
        for wrong in exercise.wrong_answers
    ]


def _forbidden(solution):
    """What would give the answer away: its value as printed, or the expression it returns."""
    if callable(solution):
        source = inspect.getsource(solution)
        returned = source.rsplit("return", 1)[1].strip()
        return [returned, returned.replace(" ", "")]
    if isinstance(solution, str):
        return [solution]
    if isinstance(solution, int):
        return [rf"(?<![\w,\[-]){solution}(?![\w,\]])"]  # the number on its own, not inside a row
    ids, mask = solution
    return [re.escape(",".join(map(str, ids)))]


@pytest.mark.parametrize("key, answer", _tries())
def test_a_wrong_try_names_a_row_and_not_the_answer(key, answer):
    said = status(key, answer)
    assert said.startswith("not yet: "), said
    assert ROW.search(said), f"no counterexample row in: {said}"
    solution = EXERCISES[key].solution
    for pattern in _forbidden(solution):
        found = re.search(pattern, said) if not callable(solution) else (pattern in said)
        assert not found, f"{key} gives the answer away: {said}"


def test_the_check_can_fail():
    # a message that states the answer is caught by the same patterns
    assert re.search(_forbidden(2)[0], "not yet: it pools 2 on [0,0,0,5,6,7]")
    assert not re.search(_forbidden(2)[0], "not yet: see [0,0,5,2,7]")
