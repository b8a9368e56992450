"""Exercise checkers: the workbook's one convention for exercises.

In a notebook an exercise is two cells. The first holds a stub the reader fills in::

    answer = ...                      # a value to predict
    def my_rule(input_ids, pad_token_id):
        return ...                    # an expression to write

The second calls ``check("01.1", my_rule)``. ``check`` prints exactly one status line,
``not attempted yet``, ``correct``, or ``not yet: ...`` with a counterexample, returns
nothing (so the cell shows only that line) and never raises, so a notebook stored with
its stubs unfilled runs top to bottom and passes strict nbval. ``status`` returns the
same text without printing. Reference answers live in ``pp_demo.solutions``.
"""

from dataclasses import dataclass
from typing import Callable

import torch

from .cases import CASES, PAD, REVIEW_TABLE
from .rules import count_minus_one

__all__ = ["Exercise", "EXERCISES", "check", "status", "register", "NotAttempted"]

NOT_ATTEMPTED = "not attempted yet"
CORRECT = "correct"


@dataclass(frozen=True)
class Exercise:
    """``judge(answer)`` returns ``None`` when the answer is right, else what is wrong."""

    key: str
    question: str
    judge: Callable[[object], str | None]


EXERCISES: dict[str, Exercise] = {}


def register(key, question):
    """Decorator: file a judge function as exercise ``key`` (other modules add theirs)."""
    def add(judge):
        EXERCISES[key] = Exercise(key, question, judge)
        return judge
    return add


class NotAttempted(Exception):
    """Raised by a judge when a function answer still returns the stub's ``...``."""


def _is_stub(answer):
    return answer is Ellipsis


def status(key, answer):
    """The status of ``answer`` to exercise ``key``, as text."""
    exercise = EXERCISES.get(key)
    if exercise is None:
        return f"no exercise {key!r}; known: {', '.join(EXERCISES)}"
    if _is_stub(answer):
        return NOT_ATTEMPTED
    try:
        problem = exercise.judge(answer)
    except NotAttempted:
        return NOT_ATTEMPTED
    except Exception as error:  # the reader's code may raise anything; report, don't crash
        problem = f"your answer raised {type(error).__name__}: {error}"
    return CORRECT if problem is None else f"not yet: {problem}"


def check(key, answer):
    """Print the one status line of ``answer`` to exercise ``key``."""
    print(f"[{key}] {status(key, answer)}")


# ------------------------------------------------------------------ notebook 01

def _ids_text(case):
    return "[" + ",".join(map(str, case.input_ids)) + "]"


@register("01.1", "Write a rule from input_ids and pad_token_id that pools where model.forward "
                  "pools on every padding case.")
def _judge_forward_rule(rule):
    if not callable(rule):
        return "the answer should be a function (input_ids, pad_token_id) -> positions"
    for case in CASES.values():
        ids, _ = case.tensors()
        got = rule(ids, PAD)
        if _is_stub(got):
            raise NotAttempted
        if not isinstance(got, torch.Tensor) or got.shape != (1,):
            return f"on {case.name} {_ids_text(case)} it returned {got!r}, not one position per row"
        lands_on = int(got[0]) % case.length
        if lands_on != case.forward_pools:
            return (f"on {case.name} {_ids_text(case)} your rule pools {lands_on}, "
                    f"model.forward pools {case.forward_pools}")
    return None


@register("01.2", "Name the one row of the review table where the first-pad rule (with the "
                  "modulo) pools the wrong token.")
def _judge_first_pad_row(name):
    if name not in REVIEW_TABLE:
        return f"{name!r} is not one of the review table's rows: {', '.join(REVIEW_TABLE)}"
    if name != "right_pad_in_content":
        case = CASES[name]
        return f"on {name} {_ids_text(case)} first_pad_mod pools {case.true_last}, the true last real token"
    return None


@register("01.3", "Which position does the count rule pool on [0, 0, 0, 5, 6, 7] (pad 0)? "
                  "Give an int.")
def _judge_count_prediction(position):
    row = torch.tensor([[0, 0, 0, 5, 6, 7]])
    expected = int(count_minus_one(row, PAD)[0])
    if not isinstance(position, int):
        return f"give a position as an int, not {type(position).__name__}"
    if position != expected:
        hint = " (that is the true last real token; the count rule counts, it does not look)" if position == 5 else ""
        return f"{position} is not what the count rule pools{hint}"
    return None
