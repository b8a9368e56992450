"""The exercise machinery: a registry of exercises (one record each, ``Exercise``, filed by
``register`` beside its judge), ``status`` and ``check``; the convention is described in
``pp_demo.exercises``. The facilitator guide (``tools/facilitator.py``) reads these records
and nothing else."""

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from pp_demo.pooling.cases import CASES, PAD, row_text

from .refusals import calls_watched, refused_code

__all__ = [
    "Exercise",
    "WrongAnswer",
    "EXERCISES",
    "PACKAGE_RULES",
    "check",
    "status",
    "register",
    "NotAttempted",
    "row_answer",
]

NOT_ATTEMPTED = "not attempted yet"
CORRECT = "correct"
ANSWER_TIMEOUT_S = 10.0  # the slowest judge, with a right answer, takes about 1.5 s on a laptop
# what an answer that is a rule may not call: the package's own rules
PACKAGE_RULES = ("pp_demo.pooling.rules",)
Judge = Callable[[Any], "str | None"]
Row = TypeVar("Row")
Returned = TypeVar("Returned")


class WrongAnswer(NamedTuple):
    """A common wrong answer; the facilitator guide prints beside it the checker's line
    (what the attendee sees)."""

    answer: object
    shown: str | None  # how the guide writes the answer; None: its repr reads well
    reveals: str  # the misconception it points at


def wrong_answer(answer: object, reveals: str, shown: str | None = None) -> WrongAnswer:
    """A ``WrongAnswer`` whose ``shown`` is given by keyword, as most records need none."""
    return WrongAnswer(answer, shown, reveals)


@dataclass(frozen=True)
class Exercise:
    """One exercise: ``judge(answer)`` returns ``None`` when the answer is right, else what is
    wrong; ``solution`` is the reference answer, ``why`` says why it is right, ``wrong_answers``
    are the common wrong ones (the checker must reject each: ``tests/repo/test_episodes.py``)."""

    key: str
    question: str
    judge: Callable[[object], str | None]
    solution: object
    why: str
    wrong_answers: tuple[WrongAnswer, ...]
    refuse: tuple[str, ...] = ()


EXERCISES: dict[str, Exercise] = {}


def register(
    key: str, question: str, refuse: tuple[str, ...] = (), *, solution: object, why: str, wrong: Sequence[WrongAnswer]
) -> Callable[[Judge], Judge]:
    """File a judge as exercise ``key`` with its ``Exercise`` record. An answer calling a function
    of a module in ``refuse`` is told to write it (``refusals``): a judge must not call one."""

    def add(judge: Judge) -> Judge:
        EXERCISES[key] = Exercise(key, question, judge, solution, why, tuple(wrong), refuse)
        return judge

    return add


class NotAttempted(Exception):
    """Raised by a judge when a function answer still returns the stub's ``...``."""


def answered(got: Returned) -> Returned:
    """What a function answer returned, unless it is the stub's ``...``: then ``NotAttempted``."""
    if got is ...:
        raise NotAttempted
    return got


def status(key: str, answer: object, timeout_s: float = ANSWER_TIMEOUT_S) -> str:
    """The status of ``answer`` to exercise ``key``, as text. Never raises, never hangs: the
    judge (which calls a function answer) runs in a daemon thread given ``timeout_s`` seconds;
    an answer that loops is left running there, one that exits (``sys.exit``) or is
    interrupted is a ``not yet:`` line like any other."""
    exercise = EXERCISES.get(key)
    if exercise is None:
        return f"no exercise {key!r}; known: {', '.join(EXERCISES)}"
    if answer is ...:
        return NOT_ATTEMPTED
    box: list[str] = []
    worker = threading.Thread(
        target=lambda: box.append(_judged(exercise, answer)), name=f"pp_demo-exercise-{key}", daemon=True
    )
    worker.start()
    try:
        worker.join(timeout_s)
    except KeyboardInterrupt:  # the kernel's interrupt button: the check ends, the answer is left
        return "not yet: interrupted before your answer returned (it is left running in the background)"
    if not box:
        return (
            f"not yet: your answer did not return within {timeout_s:g} s (a loop that never ends?); "
            "it is left running in the background: restart the kernel if the notebook slows down"
        )
    return box[0]


def _judged(exercise: Exercise, answer: object) -> str:
    """The status line: the judge's verdict on ``answer``, or what the answer did wrong
    (raised, exited, called a refused function)."""
    with calls_watched(refused_code(exercise.refuse)) as called:
        try:
            problem = exercise.judge(answer)
        except NotAttempted:
            return NOT_ATTEMPTED
        except SystemExit as error:  # sys.exit() in the answer: the kernel must not exit with it
            problem = f"your answer called sys.exit({'' if error.code is None else repr(error.code)}): return a value"
        except BaseException as error:  # the reader's code may raise anything; report, don't crash
            said = str(error)
            problem = f"your answer raised {type(error).__name__}" + (f": {said}" if said else "")
    if called:  # whatever it returned, it was not written from the definition
        problem = f"your answer calls {called[0]}: write it yourself from the definition"
    return CORRECT if problem is None else f"not yet: {problem}"


def check(key: str, answer: object) -> None:
    """Print the one status line of ``answer`` to exercise ``key``; never raises, never hangs."""
    print(f"[{key}] {status(key, answer)}")


# ---- small helpers the notebooks' judges share


def true_last(mask: Sequence[int]) -> int | None:
    """The last position the mask marks as real, in plain Python (None if there is none)."""
    return max((i for i, m in enumerate(mask) if m), default=None)


def is_int(value: object) -> bool:
    """An int, and not a bool (``True`` is an int to Python, not a number to the reader)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_list(answer: Any) -> list[int] | None:
    """The answer as a list of ints, or None when it is not an iterable (a string is not) of ints."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return None
    items = list(answer)
    return items if all(map(is_int, items)) else None


def int_pair(answer: Any) -> tuple[int, int] | None:
    items = int_list(answer)
    return (items[0], items[1]) if items is not None and len(items) == 2 else None


def index_list(answer: Any, count: int, what: str = "rows") -> list[int] | str:
    """The answer as a list of ints in ``0..count-1``, or the problem with it as text."""
    indices = int_list(answer)
    if indices is None:
        return f"give the {what} as a list of ints, e.g. [0, 2]"
    outside = [i for i in indices if not 0 <= i < count]
    if outside:
        return f"there is no {what[:-1]} {outside[0]}: the {what} run from 0 to {count - 1}"
    return indices


def row_answer(answer: Any) -> tuple[list[int], list[int], str] | str:
    """``(ids, mask, label)`` from a case name or a pair (input_ids, attention_mask) of int
    lists, or the problem."""
    if isinstance(answer, str):
        if answer not in CASES:
            return f"{answer!r} is not a padding case; known: {', '.join(CASES)}"
        case = CASES[answer]
        return list(case.input_ids), list(case.attention_mask), f"{answer} {row_text(case.input_ids)}"
    try:
        ids, mask = (list(part) for part in answer)
    except (TypeError, ValueError):
        return "give a case name, or a pair (input_ids, attention_mask) of two lists of ints"
    if not ids or len(ids) != len(mask):
        return "input_ids and attention_mask must be non-empty and of one length"
    if not all(map(is_int, ids + mask)):
        return "input_ids and attention_mask must hold ints"
    if any(m not in (0, 1) for m in mask):
        return "the attention mask holds only 0 and 1"
    return ids, mask, row_text(ids)


# ---- judging from the definitions, in plain Python: every judge works from these, never with the
# package's rules the notebooks show (a rule would judge itself)


def forward_pools(ids: Sequence[int], pad: int) -> int:
    """Where ``model.forward`` pools: the rightmost non-pad position, else 0."""
    return max((i for i, t in enumerate(ids) if t != pad), default=0)


def count_pools(ids: Sequence[int], pad: int, wrap: bool = True) -> int:
    """Where the count rule lands, by counting in plain Python (wrapped to the row)."""
    position = sum(1 for t in ids if t != pad) - 1
    return position % len(ids) if wrap else position


def first_pad_pools(ids: Sequence[int], pad: int, wrap: bool = True) -> int:
    """Where the first-pad rule lands: one before the first pad id, wrapped to the row
    (no pad id at all: the raw rule sees argmax 0 as well, so -1, the last position)."""
    first = next((i for i, t in enumerate(ids) if t == pad), 0)
    return (first - 1) % len(ids) if wrap else first - 1


def count_misses(ids: Sequence[int]) -> bool:
    return count_pools(ids, PAD) != forward_pools(ids, PAD)


def first_pad_misses(ids: Sequence[int]) -> bool:
    return first_pad_pools(ids, PAD) != forward_pools(ids, PAD)


def one_counterexample(misjudged: list[str]) -> str | None:
    """The verdict on ``misjudged`` (the wrong rows, with reasons): the first and how many
    more, so the reader works each out rather than reading a list."""
    if not misjudged:
        return None
    more = f" ({len(misjudged) - 1} more row(s) misjudged)" if len(misjudged) > 1 else ""
    return misjudged[0] + more


def judge_picked_rows(
    answer: Any, rows: Sequence[Row], picks: Callable[[Row], bool], how: str, shown: Callable[[Any], str] = row_text
) -> str | None:
    """The verdict on row indices meant to be those ``picks`` selects by definition: a wrong row
    (``shown`` as text) comes with ``how`` to work it out, never where each rule lands."""
    picked = index_list(answer, len(rows))
    if isinstance(picked, str):
        return picked
    wrong = [i for i, row in enumerate(rows) if (i in picked) != picks(row)]
    return one_counterexample([f"row {i} {shown(rows[i])} is misjudged: {how}" for i in wrong])
