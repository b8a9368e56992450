"""The exercise machinery: a registry of judges, ``status`` and ``check``.

The convention itself is described in ``pp_demo.exercises``.
"""

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from ..cases import PaddingCase, row_text

__all__ = ["Exercise", "EXERCISES", "check", "status", "register", "NotAttempted", "forget_attempts"]

NOT_ATTEMPTED = "not attempted yet"
CORRECT = "correct"


@dataclass(frozen=True)
class Exercise:
    """``judge(answer)`` returns ``None`` when the answer is right, else what is wrong."""

    key: str
    question: str
    judge: Callable[[object], str | None]
    refuse_package_rules: bool = False  # the answer is a rule: calling pp_demo.rules' own is refused


EXERCISES: dict[str, Exercise] = {}


Judge = Callable[[Any], "str | None"]


def register(key: str, question: str, refuse_package_rules: bool = False) -> Callable[[Judge], Judge]:
    """Decorator: file a judge function as exercise ``key`` (other modules add theirs).
    With ``refuse_package_rules`` the pooling rules of ``pp_demo.rules`` raise while the
    answer is judged, so a judge that sets it must not call them itself."""

    def add(judge: Judge) -> Judge:
        EXERCISES[key] = Exercise(key, question, judge, refuse_package_rules)
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
        if exercise.refuse_package_rules:
            with package_rules_hidden():
                problem = exercise.judge(answer)
        else:
            problem = exercise.judge(answer)
    except NotAttempted:
        return NOT_ATTEMPTED
    except PackageRuleCalled as error:
        problem = str(error)
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


# ---- judging from the definition, not from the package's answer


def forward_pools(ids: Sequence[int], pad: int) -> int:
    """Where ``model.forward`` pools a row, from its definition, in plain Python: the
    rightmost position whose id is not the pad id, 0 when there is none."""
    return max((i for i, t in enumerate(ids) if t != pad), default=0)


def count_pools(ids: Sequence[int], pad: int, wrap: bool = True) -> int:
    """Where the count rule lands, by counting in plain Python (wrapped to the row)."""
    position = sum(1 for t in ids if t != pad) - 1
    return position % len(ids) if wrap else position


def first_pad_pools(ids: Sequence[int], pad: int) -> int:
    """Where the first-pad rule lands: one before the first pad id, wrapped to the row
    (no pad id at all: the raw rule sees argmax 0 as well, so -1, the last position)."""
    first = next((i for i, t in enumerate(ids) if t == pad), 0)
    return (first - 1) % len(ids)


class PackageRuleCalled(Exception):
    """Raised when an answer calls the package's own implementation of a rule."""


@contextmanager
def package_rules_hidden() -> Iterator[None]:
    """While judging a function answer, every pooling rule of ``pp_demo.rules`` (module
    functions and ``RULES`` entries) raises, so an answer that calls the package's
    rule instead of writing the expression is told so."""
    from .. import rules

    def hidden(name: str) -> Callable[..., NoReturn]:
        def refuse(*args: object, **kwargs: object) -> NoReturn:
            raise PackageRuleCalled(f"your answer calls pp_demo.rules.{name}: write the expression itself")

        return refuse

    saved_fns = {rule.fn.__name__: rule.fn for rule in rules.RULES.values()}
    saved_rules = dict(rules.RULES)
    try:
        for name in saved_fns:
            setattr(rules, name, hidden(name))
        for key, rule in saved_rules.items():
            rules.RULES[key] = replace(rule, fn=hidden(rule.fn.__name__))
        yield
    finally:
        for name, fn in saved_fns.items():
            setattr(rules, name, fn)
        rules.RULES.update(saved_rules)


_SHOWN: set[str] = set()  # exercises whose one counterexample has been shown


def one_counterexample(key: str, misjudged: list[str]) -> str | None:
    """The verdict on a per-row answer: ``misjudged`` describes each row the answer gets
    wrong (each with its reason). The first wrong attempt at ``key`` sees one of them;
    later attempts only how many rows are still misjudged, so trying again is not a way
    to read the answer off row by row."""
    if not misjudged:
        return None
    if key not in _SHOWN:
        _SHOWN.add(key)
        more = f" ({len(misjudged) - 1} more row(s) misjudged)" if len(misjudged) > 1 else ""
        return misjudged[0] + more
    return (
        f"{len(misjudged)} row(s) still misjudged; the counterexample was shown on your first try: "
        "work each row out from the rule's definition"
    )


def forget_attempts() -> None:
    """Start over: the next wrong attempt at any exercise sees its counterexample again."""
    _SHOWN.clear()
