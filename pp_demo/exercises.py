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


# ------------------------------------------------------------------ notebook 02

def _gpipe_idle(n_micro, stage, backward):
    """Idle slots of ``stage`` between the step's first and last slot, and the step's length."""
    from .figures import gpipe_slots  # matplotlib is needed only by this exercise

    slots = gpipe_slots(n_micro, 2, backward)
    length = max(slot for _, slot, _, _ in slots) + 1
    return length - sum(1 for s, *_ in slots if s == stage), length


@register("02.1", "GPipe, 2 stages, 4 micro-batches, forwards and backwards: how many time slots "
                  "does stage 0 sit idle between the step's first and last slot? Give an int.")
def _judge_idle_slots(answer):
    if not isinstance(answer, int) or isinstance(answer, bool):
        return f"give a number of slots as an int, not {type(answer).__name__}"
    idle, length = _gpipe_idle(4, 0, backward=True)
    if answer == idle:
        return None
    if answer == 2 * idle:
        return f"{answer} counts both stages together; the question asks about stage 0 alone"
    if answer == _gpipe_idle(4, 0, backward=False)[0]:
        return f"{answer} is the forwards-only answer; with backwards the pipe fills and drains twice"
    return (f"{answer} is not it: the step lasts {length} slots; count the blank slots in "
            "stage 0's row of draw_gpipe_timeline(4, backward=True)")


@register("02.2", "Write bubble_fraction(m): the share of the slots of a two-stage GPipe step "
                  "(forwards only, m micro-batches) in which a stage sits idle.")
def _judge_bubble_fraction(bubble_fraction):
    if not callable(bubble_fraction):
        return "the answer should be a function m -> a number between 0 and 1"
    for m in range(1, 17):
        got = bubble_fraction(m)
        if _is_stub(got):
            raise NotAttempted
        idle, length = _gpipe_idle(m, 0, backward=False)
        if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - idle / length) > 1e-9:
            return (f"for m={m} you return {got!r}, but each stage is idle {idle} of the step's "
                    f"{length} slots")
    return None


_SENT = ("hidden", "input_ids", "attention_mask")


@register("02.3", "The first stage sends hidden, input_ids and attention_mask. Which one would the "
                  "last stage not need if it pooled from the attention mask (rightmost_attended)?")
def _judge_unneeded_tensor(name):
    if name not in _SENT:
        return f"{name!r} is not one of the tensors the first stage sends: {', '.join(_SENT)}"
    if name == "hidden":
        return "the last stage's layers start from the hidden states: without them there is nothing to run"
    if name == "attention_mask":
        return ("rightmost_attended reads the attention mask, and the last stage's layers need it "
                "too, to keep padding out of attention")
    return None


# ------------------------------------------------------------------ notebook 03

from .cases import as_batch  # noqa: E402  (kept with the section that uses it)
from .rules import rightmost_non_pad  # noqa: E402

_SWAPPED_REPRO = ("right", "left")
_SEED_LEFT_PADDED = ((0, 0, 5, 6, 7, 8), (0, 5, 6, 7, 8, 9))
_MIXED_BATCH = ((5, 6, 7, 8, 9, 10), (0, 0, 0, 0, 0, 9), (9, 0, 0, 0, 0, 0), (0, 5, 6, 7, 8, 0), (5, 6, 0, 7, 0, 0))


def _row_text(row):
    return "[" + ",".join(str(int(t)) for t in row) + "]"


def _count_vs_forward(ids):
    """Per row: (position the count rule pools, position model.forward pools), after indexing."""
    count = count_minus_one(ids, PAD) % ids.shape[-1]
    forward = rightmost_non_pad(ids, PAD)
    return list(zip(count.tolist(), forward.tolist()))


def _judge_verdicts(answer, ids):
    if not isinstance(answer, (list, tuple)) or not all(isinstance(a, bool) for a in answer):
        return "give a list of True or False, one per row, like the reproduction line"
    if len(answer) != ids.shape[0]:
        return f"the batch has {ids.shape[0]} rows, your list has {len(answer)}"
    for i, (said, (count, forward)) in enumerate(zip(answer, _count_vs_forward(ids))):
        if said != (count == forward):
            verdict = "matches" if count == forward else "does not match"
            return (f"row {i} {_row_text(ids[i])}: the count rule pools {count}, model.forward pools "
                    f"{forward}, so that row {verdict}")
    return None


@register("03.1", "Predict the count rule's reproduction line with the rows swapped: right-padded "
                  "[5,6,7,8,0,0] first, left-padded [0,0,5,6,7,8] second. A list of bools.")
def _judge_swapped_reproduction(answer):
    return _judge_verdicts(answer, as_batch(_SWAPPED_REPRO)[0])


@register("03.2", "Predict the count rule's verdict per row on the pull request's left-padded test "
                  "batch [[0,0,5,6,7,8], [0,5,6,7,8,9]]. A list of bools.")
def _judge_seed_left_batch(answer):
    return _judge_verdicts(answer, torch.tensor(_SEED_LEFT_PADDED))


@register("03.3", "Which rows (indices) of the five-row mixed batch does the count rule pool at a "
                  "different position from model.forward?")
def _judge_wrong_rows(answer):
    ids = torch.tensor(_MIXED_BATCH)
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return "give the row indices as a list of ints, e.g. [0, 2]"
    answer = list(answer)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in answer):
        return "give the row indices as a list of ints, e.g. [0, 2]"
    for i in answer:
        if not 0 <= i < ids.shape[0]:
            return f"there is no row {i}: the batch has rows 0 to {ids.shape[0] - 1}"
    pairs = _count_vs_forward(ids)
    for i, (count, forward) in enumerate(pairs):
        if (i in answer) != (count != forward):
            if count == forward:
                return f"row {i} {_row_text(ids[i])}: the count rule pools {count} and model.forward pools {forward} too"
            return f"row {i} {_row_text(ids[i])}: the count rule pools {count}, model.forward pools {forward}"
    return None


# ---- notebook 07

from .rules import pooled_positions  # noqa: E402  (kept with the section that uses it)
from .survey import CLASSES  # noqa: E402

_PADDED_CLASSES = ("a", "b", "c", "d")  # class e reads lengths, which no padded row carries


def mystery_07(input_ids, attention_mask, pad_token_id):
    """An expression of the kind found in real pooling code, for exercise 07.1."""
    return (input_ids != pad_token_id).long().cumsum(-1).argmax(-1)


def _class_counterexample(fn, letter):
    """The first case with a real token where ``fn`` and class ``letter`` land apart, or None."""
    rule = CLASSES[letter].rule
    for case in CASES.values():
        if case.true_last is None:
            continue
        ids, mask = case.tensors()
        mine = int(fn(ids, mask, PAD).reshape(-1)[0]) % case.length
        theirs = int(pooled_positions(rule, input_ids=ids, pad_token_id=PAD, attention_mask=mask)[0]) % case.length
        if mine != theirs:
            return f"on {case.name} {_ids_text(case)} class {letter} ({rule}) pools {theirs}, the expression {mine}"
    return None


@register("07.1", "Run mystery_07 on the padding cases and name its class: one of 'a', 'b', 'c', 'd', 'e'.")
def _judge_mystery_class(letter):
    if not isinstance(letter, str) or letter not in CLASSES:
        return f"{letter!r} is not a class; answer with one of {', '.join(map(repr, CLASSES))}"
    if letter == "e":
        return "class e reads the sequence lengths of a packed batch; mystery_07 reads input_ids"
    return _class_counterexample(mystery_07, letter)


def _as_row(answer):
    """``(ids, mask, label)`` from a case name or an ``(input_ids, attention_mask)`` pair, else a problem."""
    if isinstance(answer, str):
        if answer not in CASES:
            return f"{answer!r} is not a padding case; known: {', '.join(CASES)}"
        case = CASES[answer]
        return case.input_ids, case.attention_mask, f"{answer} {_ids_text(case)}"
    try:
        ids, mask = (list(part) for part in answer)
    except (TypeError, ValueError):
        return "give a case name, or a pair (input_ids, attention_mask) of two lists of ints"
    if not ids or len(ids) != len(mask):
        return "input_ids and attention_mask must be non-empty and of one length"
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in ids + mask):
        return "input_ids and attention_mask must hold ints"
    if any(m not in (0, 1) for m in mask):
        return "the attention mask holds only 0 and 1"
    return ids, mask, "[" + ",".join(map(str, ids)) + "]"


@register("07.2", "Find a row (a case name, or a pair (input_ids, attention_mask), pad id 0) with at "
                  "least one real token on which class c and class d pool different positions.")
def _judge_c_versus_d(answer):
    row = _as_row(answer)
    if isinstance(row, str):
        return row
    ids, mask, label = row
    if not any(mask):
        return f"on {label} the mask marks no real token: there is no right answer to disagree about"
    ids_t, mask_t = torch.tensor([ids]), torch.tensor([mask])
    c = int(pooled_positions(CLASSES["c"].rule, input_ids=ids_t, pad_token_id=PAD)[0])
    d = int(pooled_positions(CLASSES["d"].rule, attention_mask=mask_t)[0])
    if c == d:
        return (f"on {label} both pool {c}: they part only when the last real token's id is the pad "
                "id, or a token after it is masked out without carrying the pad id")
    return None


# ---- notebook 04

from .rules import first_pad_minus_one_wrapped  # noqa: E402  (kept with the section that uses it)

# A batch built by hand, pad id 0 = eos id: some rows end in a real eos, some in padding,
# some carry an eos inside the text. The true last real token is read from the mask.
_EOS_BATCH = (((5, 6, 7, 0), (1, 1, 1, 1)),
              ((0, 0, 5, 6), (0, 0, 1, 1)),
              ((5, 0, 6, 0), (1, 1, 1, 0)),
              ((5, 6, 0, 0), (1, 1, 1, 0)),
              ((0, 5, 0, 6), (0, 1, 1, 1)))
# a prompt <eos> response <eos> row, right-padded (exercise 04.3)
_PAIR_ROW = ((5, 6, 0, 7, 8, 0, 0, 0), (1, 1, 1, 1, 1, 1, 0, 0))


def _true_last(mask):
    """The last position the mask marks as real, in plain Python (None if there is none)."""
    real = [i for i, m in enumerate(mask) if m]
    return real[-1] if real else None


def _eos_batch():
    ids = torch.tensor([row for row, _ in _EOS_BATCH])
    mask = torch.tensor([m for _, m in _EOS_BATCH])
    return ids, mask


@register("04.1", "In the five-row batch (pad id 0 = eos id), which rows (indices) does rightmost_non_pad "
                  "pool somewhere other than the true last real token?")
def _judge_rightmost_non_pad_rows(answer):
    ids, mask = _eos_batch()
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return "give the row indices as a list of ints, e.g. [0, 2]"
    answer = list(answer)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in answer):
        return "give the row indices as a list of ints, e.g. [0, 2]"
    for i in answer:
        if not 0 <= i < ids.shape[0]:
            return f"there is no row {i}: the batch has rows 0 to {ids.shape[0] - 1}"
    pooled = rightmost_non_pad(ids, PAD).tolist()
    for i, (row, row_mask) in enumerate(_EOS_BATCH):
        true_last = _true_last(row_mask)
        if (i in answer) != (pooled[i] != true_last):
            text = f"row {i} {_row_text(row)} with mask {_row_text(row_mask)}"
            if pooled[i] == true_last:
                return f"{text}: rightmost_non_pad pools {pooled[i]}, and that is the true last real token"
            return f"{text}: rightmost_non_pad pools {pooled[i]}, the true last real token is {true_last}"
    return None


def _mask_rule_rows():
    """Rows to judge 04.2 on: every case with a real token, alone, then the batch of 04.1."""
    rows = [(case.tensors(), f"{case.name} {_ids_text(case)} (mask {_row_text(case.attention_mask)})")
            for case in CASES.values() if case.true_last is not None]
    rows.append((_eos_batch(), "the batch of exercise 04.1"))
    return rows


@register("04.2", "Write a rule (input_ids, attention_mask, pad_token_id) -> positions that pools the true "
                  "last real token of every row that has one, a row ending in a real eos included.")
def _judge_mask_rule(rule):
    if not callable(rule):
        return "the answer should be a function (input_ids, attention_mask, pad_token_id) -> positions"
    for (ids, mask), label in _mask_rule_rows():
        got = rule(ids, mask, PAD)
        if _is_stub(got):
            raise NotAttempted
        if not isinstance(got, torch.Tensor) or got.shape != (ids.shape[0],):
            return f"on {label} it returned {got!r}, not one position per row"
        for i in range(ids.shape[0]):
            lands_on, want = int(got[i]) % ids.shape[1], _true_last(mask[i].tolist())
            if lands_on != want:
                where = label if ids.shape[0] == 1 else f"row {i} of {label}"
                return f"on {where} your rule pools {lands_on}, the true last real token is {want}"
    return None


@register("04.3", "A prompt <eos> response <eos> row, right-padded: [5,6,0,7,8,0,0,0] with mask "
                  "[1,1,1,1,1,1,0,0]. Which position does first_pad_mod pool? Give an int.")
def _judge_first_pad_prediction(position):
    if not isinstance(position, int) or isinstance(position, bool):
        return f"give a position as an int, not {type(position).__name__}"
    ids, mask = _PAIR_ROW
    expected = int(first_pad_minus_one_wrapped(torch.tensor([ids]), PAD)[0])
    if position == expected:
        return None
    hints = {int(rightmost_non_pad(torch.tensor([ids]), PAD)[0]): "where rightmost_non_pad pools",
             _true_last(mask): "the true last real token, the closing eos",
             int(count_minus_one(torch.tensor([ids]), PAD)[0]): "where the count rule pools",
             len(ids) - 1: "the last position, where first_pad_mod lands only when a row starts with "
                           "a pad id or has none"}
    hint = f"; {position} is {hints[position]}" if position in hints else ""
    return f"{position} is not where first_pad_mod pools{hint}. Find the first pad id of the row"


# ---- notebook 06

# Rows for 06.1 (pad id 0): only input_ids matter to the pooling rules.
_BLOOM_BATCH = ((0, 0, 5, 6, 7, 8), (5, 6, 0, 7, 0, 0), (0, 5, 6, 7, 0, 0), (0, 5, 0, 0, 7, 8), (5, 6, 7, 8, 9, 10))
_GPT2_ROW = ((5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0))  # exercise 06.2: position 1's view


def _as_index_list(answer, count, what):
    """The answer as a list of ints in 0..count-1, or the problem with it."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return f"give the {what} as a list of ints, e.g. [0, 2]"
    answer = list(answer)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in answer):
        return f"give the {what} as a list of ints, e.g. [0, 2]"
    for i in answer:
        if not 0 <= i < count:
            return f"there is no {what[:-1]} {i}: they run from 0 to {count - 1}"
    return answer


@register("06.1", "ColossalAI 0.5.0's Bloom forward pools with first_pad_mod. Which rows (indices) of the "
                  "five-row batch does it pool at another position than model.forward?")
def _judge_bloom_rows(answer):
    ids = torch.tensor(_BLOOM_BATCH)
    answer = _as_index_list(answer, ids.shape[0], "rows")
    if isinstance(answer, str):
        return answer
    theirs = first_pad_minus_one_wrapped(ids, PAD).tolist()
    forward = rightmost_non_pad(ids, PAD).tolist()
    for i, (pooled, wanted) in enumerate(zip(theirs, forward)):
        if (i in answer) != (pooled != wanted):
            also = " too" if pooled == wanted else ""
            return f"row {i} {_row_text(ids[i])}: first_pad_mod pools {pooled}, model.forward pools {wanted}{also}"
    return None


@register("06.2", "ColossalAI's GPT-2 forward under sdpa, row [5,6,7,8,0,0] with mask [1,1,1,1,0,0]: which "
                  "positions does position 1 attend to in the first layer? A list of ints.")
def _judge_gpt2_view(answer):
    ids, mask = _GPT2_ROW
    answer = _as_index_list(answer, len(ids), "positions")
    if isinstance(answer, str):
        return answer
    seen = {j for j, m in enumerate(mask) if m}  # a padding-only mask, and nothing causal
    if set(answer) == seen:
        return None
    if set(answer) == {0, 1}:
        return ("[0, 1] is causal attention, what model.forward's GPT-2 does; ColossalAI's mask has no "
                "causal part, and sdpa adds none when it is handed a mask")
    padding = sorted(set(answer) - seen)
    if padding:
        return (f"{padding} {'is' if len(padding) == 1 else 'are'} padding: the padding part is the part of "
                "the mask ColossalAI does pass")
    return f"{sorted(answer)} leaves out {sorted(seen - set(answer))}, which the mask ColossalAI passes leaves open"


def _allowed(mask):
    """What model.forward's GPT-2 lets position i see: j <= i, and j not padding."""
    length = mask.shape[-1]
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    return causal & mask.bool()[:, None, :]


def _mask_batches():
    batches = [(case.tensors()[1], f"{case.name} (mask {_row_text(case.attention_mask)})")
               for case in CASES.values()]
    batches.append((as_batch(REVIEW_TABLE)[1], "the review table's four rows as one batch"))
    return batches


@register("06.3", "Write causal_padding_mask(attention_mask) -> a bool tensor (batch, L, L), True where "
                  "position i may attend to position j in model.forward's GPT-2.")
def _judge_causal_padding_mask(make_mask):
    if not callable(make_mask):
        return "the answer should be a function attention_mask -> a bool tensor (batch, L, L)"
    for mask, label in _mask_batches():
        got = make_mask(mask)
        if _is_stub(got):
            raise NotAttempted
        batch, length = mask.shape
        if not isinstance(got, torch.Tensor) or got.shape != (batch, length, length):
            return f"on {label} it returned {got!r}, not a tensor of shape ({batch}, {length}, {length})"
        if got.dtype != torch.bool:
            return f"on {label} it returned a tensor of {got.dtype}; return True/False (dtype torch.bool)"
        wrong = (got != _allowed(mask)).nonzero()
        if len(wrong):
            b, i, j = wrong[0].tolist()
            where = f"on {label}" + (f", row {b}" if batch > 1 else "")
            if got[b, i, j]:
                why = "a later position" if j > i else "padding"
                return f"{where}: position {i} may attend to position {j} in your mask, but {j} is {why}"
            return f"{where}: position {i} may not attend to position {j} in your mask, but {j} is an earlier real token"
    return None


# ---- notebook 05

_LABELS_05 = 3   # labels of the training task: the last real token's id modulo 3
_ROW_05 = ((0, 0, 0, 17, 4, 22, 9, 14), (0, 0, 0, 1, 1, 1, 1, 1))   # exercise 05.1
_LENGTH_05 = 8   # row length of the training task


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


@register("05.1", "The row [0,0,0,17,4,22,9,14] (mask [0,0,0,1,1,1,1,1]) of the training task: give "
                  "(its label, the class of the token the count rule pools), a pair of ints.")
def _judge_label_and_pooled_class(answer):
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__") or len(answer := list(answer)) != 2:
        return "give a pair of ints: (the row's label, the class of the token the count rule pools)"
    label, pooled_class = answer
    if not (_is_int(label) and _is_int(pooled_class)):
        return "give a pair of ints: (the row's label, the class of the token the count rule pools)"
    ids, mask = _ROW_05
    want_label = ids[_true_last(mask)] % _LABELS_05
    position = int(count_minus_one(torch.tensor([ids]), PAD)[0])
    want_pooled = ids[position] % _LABELS_05
    if label != want_label:
        return f"{label} is not the row's label: that is the class (id modulo 3) of its last real token"
    if pooled_class != want_pooled:
        return (f"{pooled_class} is not it: count the real tokens and subtract one to find the position "
                "the count rule pools, then take that token's id modulo 3")
    return None


def _count_pools_a_pad(real):
    """Whether the count rule pools a pad on a left-padded row of the task with ``real`` real tokens."""
    ids = torch.tensor([[PAD] * (_LENGTH_05 - real) + [1] * real])
    return int(ids[0, int(count_minus_one(ids, PAD)[0])]) == PAD


@register("05.2", "A left-padded row of the training task has length 8 and r real tokens (r = 2..7). For "
                  "which r does the count rule pool a pad? A list (or set) of ints.")
def _judge_pad_pooled_counts(answer):
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return "give the numbers of real tokens as a list of ints, e.g. [2, 7]"
    answer = list(answer)
    if not all(_is_int(r) for r in answer):
        return "give the numbers of real tokens as a list of ints, e.g. [2, 7]"
    for r in answer:
        if not 2 <= r <= _LENGTH_05 - 1:
            return f"a left-padded row of the task has 2 to {_LENGTH_05 - 1} real tokens, not {r}"
    for r in range(2, _LENGTH_05):
        pad = _count_pools_a_pad(r)
        if (r in answer) != pad:
            first_real = _LENGTH_05 - r
            what = "a pad" if pad else "a real token"
            return (f"with r={r} the real tokens fill positions {first_real}-{_LENGTH_05 - 1}; the count rule "
                    f"pools position {r - 1}, {what}")
    return None


@register("05.3", "Another team trains through the count-rule pipeline, but pads every row on the right "
                  "(no real token has the pad id). Do its per-step losses differ from a model.forward run's "
                  "from the same weights and batches? True or False.")
def _judge_right_padded_team(answer):
    if not isinstance(answer, bool):
        return f"answer True or False, not {answer!r}"
    if answer:
        return ("on a right-padded row with no pad id among its real tokens, count - 1 is the last real "
                "token, where model.forward pools too: compare the two rules on such rows")
    return None
