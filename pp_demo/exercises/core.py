"""The exercise machinery: a registry of judges, ``status`` and ``check``.

The convention itself is described in ``pp_demo.exercises``.
"""

from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import Any

from ..cases import PaddingCase, row_text

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


Judge = Callable[[Any], "str | None"]


def register(key: str, question: str) -> Callable[[Judge], Judge]:
    """Decorator: file a judge function as exercise ``key`` (other modules add theirs)."""
    def add(judge: Judge) -> Judge:
        EXERCISES[key] = Exercise(key, question, judge)
        return judge
    return add


class NotAttempted(Exception):
    """Raised by a judge when a function answer still returns the stub's ``...``."""


def _is_stub(answer: object) -> bool:
    return answer is Ellipsis


def status(key: str, answer: object) -> str:
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


def check(key: str, answer: object) -> None:
    """Print the one status line of ``answer`` to exercise ``key``."""
    print(f"[{key}] {status(key, answer)}")


# ---- small helpers the notebooks' judges share

def ids_text(case: PaddingCase) -> str:
    return row_text(case.input_ids)


def true_last(mask: Sequence[int]) -> int | None:
    """The last position the mask marks as real, in plain Python (None if there is none)."""
    real = [i for i, m in enumerate(mask) if m]
    return real[-1] if real else None


def index_list(answer: Any, count: int, what: str = "rows") -> list[int] | str:
    """The answer as a list of ints in ``0..count-1``, or the problem with it as text."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return f"give the {what} as a list of ints, e.g. [0, 2]"
    answer = list(answer)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in answer):
        return f"give the {what} as a list of ints, e.g. [0, 2]"
    for i in answer:
        if not 0 <= i < count:
            return f"there is no {what[:-1]} {i}: the {what} run from 0 to {count - 1}"
    indices: list[int] = answer
    return indices
