"""The exercise machinery: a registry of exercises (one record each, ``Exercise``, filed by
``register`` beside its judge), ``status`` and ``check``; the convention is described in
``pp_demo.exercises``. The facilitator guide (``tools/facilitator.py``) reads these records
and nothing else."""

import contextlib
import decimal
import numbers
import os
import re
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn, TypeVar

import torch

from pp_demo.core import CASES, FAMILIES, PAD, RULES
from pp_demo.pooling.padding_table import row_text

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
# what an answer that is a rule may not call: the package's own rules, and their checked door
PACKAGE_RULES = ("pp_demo.pooling.positions", *(f"pp_demo.core.{rule.fn.__name__}" for rule in RULES.values()))
# the ids a row may hold: the tiny models' vocabulary (every family's is the same size)
VOCAB_SIZE = min(int(family.tiny["vocab_size"]) for family in FAMILIES.values())
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
    debrief: str = ""  # for an exercise done in the room: what the instructor draws out afterwards


EXERCISES: dict[str, Exercise] = {}


def register(
    key: str,
    question: str,
    refuse: tuple[str, ...] = (),
    *,
    solution: object,
    why: str,
    wrong: Sequence[WrongAnswer],
    debrief: str = "",
) -> Callable[[Judge], Judge]:
    """File a judge as exercise ``key`` with its ``Exercise`` record. An answer calling a function
    of a module in ``refuse`` is told to write it (``refusals``): a judge must not call one.
    ``debrief``: the instructor's note for an exercise done in the room (the guide prints it)."""

    def add(judge: Judge) -> Judge:
        EXERCISES[key] = Exercise(key, question, judge, solution, why, tuple(wrong), refuse, debrief)
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
    try:
        with _process_exit_refused():
            worker.start()
            worker.join(timeout_s)
    except KeyboardInterrupt:  # the kernel's interrupt button: the check ends, the answer is left
        return "not yet: interrupted before your answer returned (it is left running in the background)"
    if not box:
        return (
            f"not yet: your answer did not return within {timeout_s:g} s (a loop that never ends?); "
            "it is left running in the background: restart the kernel if the notebook slows down"
        )
    return box[0]


class _CalledProcessExit(BaseException):
    """Raised in place of ``os._exit`` while an answer is judged (``_process_exit_refused``)."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


def _refuse_process_exit(code: object = 0) -> NoReturn:
    raise _CalledProcessExit(code)


@contextlib.contextmanager
def _process_exit_refused() -> Iterator[None]:
    """Within the block, ``os._exit`` raises instead of ending the process: no handler would see it
    end the kernel (a notebook) or the script with status 0 and no line. ``check``'s child process
    is the other way (``pp_demo.verify.checker.guard``); a judge runs in the kernel's own process, on
    values the notebook holds, so the call is caught where it is made. Restored when the block ends,
    even if the answer is left running."""
    original = os._exit
    os._exit = _refuse_process_exit  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = original


def _judged(exercise: Exercise, answer: object) -> str:
    """The status line: the judge's verdict on ``answer``, or what the answer did wrong
    (raised, exited, called a refused function)."""
    with calls_watched(refused_code(exercise.refuse)) as called:
        try:
            problem = exercise.judge(answer)
        except NotAttempted:
            return NOT_ATTEMPTED
        except MetaTensor:  # the judge found no values to read, the answer raised nothing
            problem = META
        except _CalledProcessExit as error:
            problem = f"your answer called os._exit({error.code!r}), which ends the kernel's process: return a value"
        except SystemExit as error:  # sys.exit() in the answer: the kernel must not exit with it
            problem = f"your answer called sys.exit({'' if error.code is None else repr(error.code)}): return a value"
        except BaseException as error:  # the reader's code may raise anything; report, don't crash
            said = str(error)
            problem = f"your answer raised {type(error).__name__}" + (f": {said}" if said else "")
    if called:  # whatever it returned, it was not written from the definition
        problem = f"your answer calls {called[0]}: write it yourself from the definition"
    return CORRECT if problem is None else f"not yet: {problem}"


LINE_WIDTH = 80  # a check's printed lines: JupyterLab with its file browser open shows about 80
_BRACKETED = re.compile(r"\[[^\[\]]*\]")
_KEEP = "\x00"  # stands for a space inside brackets while wrapping: a row is never cut in two


def wrapped(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` in lines of at most ``width`` characters, broken at spaces only (never inside a
    word or a bracketed row); lines after the first are indented by two spaces."""
    kept = _BRACKETED.sub(lambda match: match.group().replace(" ", _KEEP), text)
    lines = textwrap.wrap(kept, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).replace(_KEEP, " ")


def check(key: str, answer: object) -> None:
    """Print the status of ``answer`` to exercise ``key``, wrapped at words in lines of at most
    ``LINE_WIDTH`` characters; never raises, never hangs."""
    print(wrapped(f"[{key}] {status(key, answer)}"))


# ---- small helpers the notebooks' judges share


def true_last(mask: Sequence[int]) -> int | None:
    """The last position the mask marks as real, in plain Python (None if there is none)."""
    return max((i for i, m in enumerate(mask) if m), default=None)


def is_int(value: object) -> bool:
    """An int, and not a bool (``True`` is an int to Python, not a number to the reader)."""
    return isinstance(value, int) and not isinstance(value, bool)


# ---- one conversion for every judge that wants a number: any real number or number-like value
# (Fraction, Decimal, numpy and torch scalars, 0-d tensors and arrays) becomes a plain int or
# float, compared by value; an int subclass's own __eq__, __int__ or __float__ has no say.


def _kind(value: object) -> str:
    """The answer's type as the reader would write it (``str``, ``list``, ``numpy.ndarray``)."""
    kind = type(value)
    return f"{kind.__module__}.{kind.__name__}".removeprefix("builtins.")


def _scalar(value: object) -> object:
    """A 0-d torch tensor or numpy array as its one Python value; anything else as it is.
    A meta tensor has no value: ``MetaTensor`` says so."""
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            raise MetaTensor
        return value.item() if value.dim() == 0 else value
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == () and hasattr(value, "item"):
        return value.item()  # a numpy scalar or 0-d array: its Python int, float or complex
    return value


class MetaTensor(Exception):
    """An answer's tensor on the meta device: shapes only, no values to judge."""


META = "your answer returned a meta tensor (shapes only, no values): compute it on a real device, e.g. cpu"


def _not_a_number(value: object, wanted: str) -> str:
    """The one line for an answer of the wrong type: the type is named, not the arithmetic."""
    if isinstance(value, str):
        return f"your answer is text ({value!r}, a str), not a number: give {wanted} without quotes"
    if isinstance(value, torch.Tensor):
        return f"your answer is a tensor of shape {tuple(value.shape)}, not one number: give {wanted}"
    if isinstance(value, bool):
        return f"your answer is {value}, a bool, not a number: give {wanted}"
    return f"your answer is a {_kind(value)}, not a number: give {wanted}"


def plain_number(value: object, wanted: str = "a number") -> float | str:
    """``value`` as a plain float when it is a real number of any type, else the one line that says
    its type is wrong (``wanted``: what to give instead, e.g. ``"a fraction such as 0.5"``)."""
    try:
        scalar = _scalar(value)
    except MetaTensor:
        return META
    if isinstance(scalar, bool) or not isinstance(scalar, numbers.Real | decimal.Decimal):
        return _not_a_number(value, wanted)
    if isinstance(scalar, int):
        return float(int.__index__(scalar))
    if isinstance(scalar, float):
        return float.__float__(scalar)
    return float(scalar)  # a Fraction, a Decimal, a numpy float: their value


def same_number(answer: object, value: float, want: float) -> bool:
    """``value`` (``plain_number(answer)``) is ``want`` to the precision of the answer's own type: a
    float32 or bfloat16 answer holds a third only to its few digits."""
    dtype = getattr(answer, "dtype", None)
    if not isinstance(dtype, torch.dtype):  # numpy's float32 is torch's, by name (numpy is not imported)
        dtype = getattr(torch, str(getattr(dtype, "name", "")), None)
    eps = torch.finfo(dtype).eps if isinstance(dtype, torch.dtype) and dtype.is_floating_point else 2.0**-52
    return abs(value - want) <= max(1e-9, 4 * eps * abs(want))


def plain_int(value: object, wanted: str = "an int") -> int | str:
    """``value`` as a plain int when it is an integer of any type (numpy's, a 0-d integer tensor),
    else the one line that says its type is wrong: ``give WANTED, not TYPE (...)``. A float, even
    2.0, is not a position or a count: it says so."""
    try:
        scalar = _scalar(value)
    except MetaTensor:
        return META
    if isinstance(scalar, bool) or not isinstance(scalar, numbers.Real | decimal.Decimal):
        return _not_a_number(value, wanted)
    if not isinstance(scalar, numbers.Integral):  # a number, but not a whole one by its type
        return f"give {wanted}, not {_kind(value)}"
    return int.__index__(scalar) if isinstance(scalar, int) else int(scalar)


def positions_problem(got: object, rows: int, label: str) -> str | None:
    """What is wrong with a rule's result on ``label`` (a batch of ``rows`` rows) as positions:
    not an integer tensor of one position per row; None when it is one. Each position's range is
    the judge's to say (``outside_the_row``), with the row it is on."""
    if not isinstance(got, torch.Tensor):
        return f"on {label} it returned a {type(got).__name__}, not a tensor: return one, e.g. torch.tensor(...)"
    if got.shape != (rows,):
        return f"on {label} it returned shape {tuple(got.shape)}, not one position per row ({rows} rows)"
    if got.is_meta:
        return meta_problem(got, f"on {label}")
    if got.is_floating_point() or got.is_complex() or got.dtype == torch.bool:
        return f"on {label} it returned {got.dtype} values: a position indexes a tensor, so make it an integer"
    return None


def outside_the_row(position: int, length: int) -> str | None:
    """Why ``position`` is no position of a row of ``length`` (counted from the left, 0 to
    length - 1: no wrap, as -1 or length would be read), or None."""
    if 0 <= position < length:
        return None
    outside = "a negative position" if position < 0 else f"past the row's last position, {length - 1}"
    return f"{position}, {outside}: positions run from 0 to {length - 1}"


def meta_problem(got: object, where: str = "") -> str | None:
    """The line for a rule's result on the meta device (a judge reading its values would raise
    inside the judge, and the reader would be told their answer raised); None otherwise."""
    if isinstance(got, torch.Tensor) and got.is_meta:
        return f"{where}: {META}" if where else META
    return None


def int_list(answer: Any) -> list[int] | None:
    """The answer as a list of plain ints, or None when it is not an iterable (a string is not) of
    ints (of any integer type: each is compared by its value)."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return None
    items = [plain_int(item) for item in answer]
    return items if all(isinstance(item, int) for item in items) else None  # type: ignore[return-value]


def unordered(answer: Any) -> bool:
    """A set or a mapping: its items have no order (``{6, 3}`` iterates as ``3, 6``), so it cannot
    stand for a pair or a list whose places mean something."""
    return isinstance(answer, AbstractSet | Mapping)


def int_pair(answer: Any) -> tuple[int, int] | None:
    """Two ints in order (a tuple, a list, a tensor), or None: a set is no pair (``unordered``)."""
    if unordered(answer):
        return None
    items = int_list(answer)
    return (items[0], items[1]) if items is not None and len(items) == 2 else None


def index_list(answer: Any, count: int, what: str = "rows") -> list[int] | str:
    """The answer as a list of ints in ``0..count-1``, or the problem with it as text."""
    indices = int_list(answer)
    if indices is None:
        return f"give the {what} as a list of ints, one int per {what[:-1]}"
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
        ids_part, mask_part = answer
        parts = [_flat_ints(ids_part), _flat_ints(mask_part)]
    except (TypeError, ValueError):
        return "give a case name, or a pair (input_ids, attention_mask) of two lists of ints"
    if parts[0] is None or parts[1] is None:
        return (
            "input_ids and attention_mask must each be one row of ints: two lists such as "
            "[5, 0, 7] and [1, 1, 1] (a 1-d integer tensor or a one-row batch is fine too)"
        )
    ids, mask = parts[0], parts[1]
    if not ids or len(ids) != len(mask):
        return "input_ids and attention_mask must be non-empty and of one length"
    if any(m not in (0, 1) for m in mask):
        return "the attention mask holds only 0 and 1"
    outside = next((t for t in ids if not 0 <= t < VOCAB_SIZE), None)
    if outside is not None:  # an embedding has no row for it: a model would fail on it, not pool it
        return f"{outside} is not a token id: ids run from 0 to {VOCAB_SIZE - 1} (the tiny models' vocabulary)"
    return ids, mask, row_text(ids)


def _flat_ints(part: Any) -> list[int] | None:
    """One row of ints from a list, a tuple, a 1-d integer tensor or array, or a batch of one
    row (``tensor([[5, 0, 7]])``, as ``CASES[name].tensors()`` gives); None otherwise."""
    if isinstance(part, torch.Tensor) or type(part).__module__ == "numpy":
        shape = tuple(getattr(part, "shape", ()))
        if len(shape) == 2 and shape[0] == 1:
            part = part[0]
        elif len(shape) != 1:
            return None
    items = int_list(part)
    return items if items is not None and all(is_int(item) for item in items) else None


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
    answer: Any,
    rows: Sequence[Row],
    picks: Callable[[Row], bool],
    how: str,
    shown: Callable[[Any], str] = row_text,
    said: tuple[str, str] | None = None,
) -> str | None:
    """The verdict on row indices meant to be those ``picks`` selects by definition. Without
    ``said``, a wrong row (``shown`` as text) comes with ``how`` to work it out. With ``said``
    (what a picked and an unpicked row are, in the question's words: the exercises done in the
    room), a wrong answer gets a counterexample elsewhere instead: a row laid out like one it
    misjudges (``sibling_row``), not among ``rows``, with what ``picks`` says of it. It never
    names the row of the answer to change: the reader tests their reasoning, not a guess."""
    picked = index_list(answer, len(rows))
    if isinstance(picked, str):
        return picked
    wrong = [i for i, row in enumerate(rows) if (i in picked) != picks(row)]
    if said is None:
        return one_counterexample([f"row {i} {shown(rows[i])} is misjudged: {how}" for i in wrong])
    if not wrong:
        return None
    other = sibling_row(rows[wrong[0]], rows, picks)
    verdict = said[0] if picks(other) else said[1]
    return f"your reasoning misjudges rows like {shown(other)}, {verdict}: {how}"


def sibling_row(row: Any, avoid: Sequence[Any], picks: Callable[[Any], bool]) -> Any:
    """A row laid out like ``row``, the same to ``picks``, and not in ``avoid``: each stretch of real
    (non-pad, attended) tokens one token longer, its ids renumbered from 21. ``row`` is a tuple of
    ids, or a pair ``(ids, mask)``; pads, pad ids among real tokens and masked positions stay as
    they are, so the reason ``picks`` gives is the same."""
    paired = len(row) == 2 and isinstance(row[0], tuple | list)
    ids, mask = (list(row[0]), list(row[1])) if paired else (list(row), [int(t != PAD) for t in row])
    for grow in range(1, 4):
        new_ids: list[int] = []
        new_mask: list[int] = []
        fresh = iter(range(21, 100))
        for i, (token, seen) in enumerate(zip(ids, mask, strict=True)):
            real = token != PAD and seen == 1
            ends_a_stretch = real and (i + 1 == len(ids) or ids[i + 1] == PAD or mask[i + 1] == 0)
            for _ in range(1 + grow * ends_a_stretch):
                new_ids.append(next(fresh) if real else token)
                new_mask.append(seen)
        other = (tuple(new_ids), tuple(new_mask)) if paired else tuple(new_ids)
        if other not in avoid and picks(other) == picks(row):
            return other
    raise AssertionError(f"no sibling of {row} keeps its verdict")  # the exercises' rows all have one
