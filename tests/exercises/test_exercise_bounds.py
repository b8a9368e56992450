"""The exercise checker is bounded: an answer that never returns, exits or is interrupted is a
``not yet:`` line, and ``check`` never raises (``pp_demo.exercises.core.status``)."""

import importlib
import sys
import threading

import pytest

from pp_demo.exercises import core

importlib.import_module("pp_demo.exercises.nb01")  # files exercise 01.1, whose answer is a function


def never_returns(*args, **kwargs):
    threading.Event().wait()


def exits(*args, **kwargs):
    sys.exit(0)


def interrupted(*args, **kwargs):
    raise KeyboardInterrupt


def test_an_answer_that_never_returns_is_not_yet_within_the_bound():
    line = core.status("01.1", never_returns, timeout_s=0.5)
    assert line.startswith("not yet: your answer did not return within 0.5 s")


def test_the_bound_is_a_few_seconds():
    assert 1 <= core.ANSWER_TIMEOUT_S <= 10


@pytest.mark.parametrize(
    "answer, expected",
    [
        (exits, "not yet: your answer called sys.exit(0): return a value"),
        (interrupted, "not yet: your answer raised KeyboardInterrupt"),
    ],
)
def test_an_answer_that_exits_is_not_yet_and_check_never_raises(capsys, answer, expected):
    core.check("01.1", answer)
    assert capsys.readouterr().out.strip() == f"[01.1] {expected}"


def test_a_right_answer_is_still_correct_through_the_thread():
    # the stub's line filled in by hand (the record's own solution is refused as an answer: test_exercise_judges)
    assert core.status("01.1", lambda ids, pad: ids.shape[-1] - 1 - (ids != pad).flip(-1).int().argmax(-1)) == "correct"
