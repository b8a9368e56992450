"""Every exercise's judge against a right answer, two plausible wrong ones and the shortcut
(a value copied from a line the notebook prints near it, or a call to a library's own
implementation of the answer). Expected verdicts are worked out by hand from the rows and
the definitions, not by the judges' code. ``tests/exercises/test_exercises.py`` adds the answers in a
wrong format and the reference solutions."""

import json
import random
import re
from pathlib import Path

import pytest
import torch

from pp_demo import core as rules
from pp_demo.exercises import EXERCISES, nb06, status
from pp_demo.exercises.solutions import SOLUTIONS
from pp_demo.pooling.positions import pooled_positions


def _fix_by_hand(ids, pad):
    # rightmost non-pad position, written with a flip (not the package's expression); 0 when none
    flipped = (ids != pad).flip(-1).int()
    return torch.where(flipped.any(-1), ids.shape[-1] - 1 - flipped.argmax(-1), 0)


def _mask_rule_by_hand(ids, mask, pad):
    return torch.tensor([max((i for i, m in enumerate(row) if m), default=0) for row in mask.tolist()])


def _causal_by_hand(mask):
    length = mask.shape[-1]
    return torch.tensor(
        [[[j <= i and row[j] == 1 for j in range(length)] for i in range(length)] for row in mask.tolist()]
    )


RIGHT = [
    ("01.1", _fix_by_hand),
    ("01.1", lambda ids, pad: ids.shape[-1] - 1 - (ids != pad).flip(-1).int().argmax(-1)),  # the stub, filled
    ("01.2", ([5, 6, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0])),  # a real eos carrying the pad id, then padding
    ("01.2", ([7, 0, 7, 0], [1, 1, 1, 0])),  # a pad id among the real tokens
    ("01.2", ([0, 5, 6, 7, 0, 0], [0, 1, 1, 1, 0, 0])),  # padded on both sides: -1 wraps to a pad
    ("01.3", 4),  # five non-pad ids in [0,5,6,0,7,8,9,0], minus one
    ("10.1", 2),  # 10 slots, 8 busy for each stage
    ("10.2", lambda m, p: 1 - m / (m + p - 1)),  # busy m of the m + p - 1 slots
    ("11.1", [3, 2, 0]),  # count pools 4, 3, 2, 3; the rightmost non-pad id at 5, 3, 5, 4
    ("11.2", 1),  # the hidden states: float; the ids and mask: long
    ("12.1", (5, 4, 3, 4)),  # the mask's five ones; four ids not 0; 4 - 1; the 8 at 4
    ("13.1", 1.1),  # -ln(1/3)
    ("02.1", [3, 0]),  # a masked position before the rightmost non-pad id: rows 0 and 3
    ("05.1", (2, 4, 0)),  # 11 % 3; five real tokens, so position 4, token 27, 27 % 3
    ("05.1", [2, 4, 0]),
    ("05.2", {4, 3, 2}),  # real tokens from 8 - r, pooled at r - 1: a pad while r - 1 < 8 - r
    ("05.3", [4, 3]),  # position 4 attends to the real tokens at or before it
    ("03.1", [True, False, False, False]),  # count pools 4, 2, 3, 2; the rightmost non-pad id at 4, 5, 4, 3
    ("03.2", (3, 6)),  # 4 non-pad ids, minus one: 3; the rightmost non-pad id, the 8, at 6
    ("03.2", [3, 6]),
    ("03.3", [4, 1, 3]),
    ("04.1", {3, 0}),
    ("04.2", _mask_rule_by_hand),
    ("04.3", 1),
    ("06.1", [2, 1]),
    ("06.2", [0, 1, 2, 3]),
    ("06.3", _causal_by_hand),
    ("07.1", "c"),
    ("07.2", ([3, 4, 5, 1, 1], [1, 1, 1, 0, 0])),
    ("08.1", [(3, 4), (0, 4), (2, 1), (2, 4)]),
    ("08.2", ("first_pad", "count")),
    ("09.1", [5, 3, 1]),
    ("09.2", {("opt", "left"), ("llama", "left")}),
]


@pytest.mark.parametrize("key, answer", RIGHT)
def test_a_right_answer_written_independently_is_correct(key, answer):
    assert status(key, answer) == "correct"


WRONG = [  # two plausible wrong answers per exercise: the slip a reader makes, with its counterexample
    ("01.1", lambda ids, pad: (ids != pad).sum(-1) - 1, "your rule pools 3, model.forward pools 5"),
    # the first-pad rule: a raw -1 on the left-padded row 0 is no position, whatever indexing makes of it
    ("01.1", lambda ids, pad: (ids == pad).int().argmax(-1) - 1, "row 0 [0,0,5,6,7,8] of the length-6 padding"),
    ("01.1", lambda ids, pad: (ids == pad).int().argmax(-1) - 1, "returns -1, a negative position"),
    ("01.1", lambda ids, pad: (ids == pad).int().argmax(-1) - 1, "and model.forward pools 5"),
    # the stub's distance read as a position: [0,0,5,6,7,8] ends in a non-pad id, distance 0
    ("01.1", lambda ids, pad: (ids != pad).flip(-1).int().argmax(-1), "row 0 [0,0,5,6,7,8] of the length-6"),
    # one too far: length - 0 = 6 on the same row, past its last position (not "pools 0": it pools nothing)
    ("01.1", lambda ids, pad: ids.shape[-1] - (ids != pad).flip(-1).int().argmax(-1), "returns 6, past the row's"),
    # the right positions, but not as a tensor of integers: said as such, never as a wrong position
    ("01.1", lambda ids, pad: (ids.shape[-1] - 1 - (ids != pad).flip(-1).int().argmax(-1)).tolist(), "a list, not"),
    ("01.1", lambda ids, pad: torch.full((len(ids),), float("nan")), "torch.float32 values: a position indexes"),
    ("01.2", ([5, 6, 7, 0, 0, 0], [1, 1, 1, 0, 0, 0]), "the first pad id is at 3; one before it, 2, lands on 2"),
    ("01.2", ([0, 0, 5, 6], [0, 0, 1, 1]), "one before it, -1, lands on 3: the true last real token"),
    ("01.2", ([5, 6, 7, 8], [1, 1, 1, 1]), "there is no pad id, so argmax gives 0"),
    ("01.2", ([5, 6, 9, 9], [1, 1, 0, 0]), "position 2 is padding (mask 0) but holds id 9: in this exercise"),
    ("10.1", 4, "counts both stages together"),
    ("10.1", 3, "the step lasts 10 slots"),
    ("11.1", [0, 2], "row 3 [3,4,0,5,6,0] is misjudged"),
    ("11.1", [0, 1, 2, 3], "row 1 [3,4,5,6,0,0] is misjudged"),
    ("11.2", 3, "an integer tensor has no gradient. Try your way on a layer"),
    ("11.2", 0, "input_ids [[5,6,7]], mask [[1,1,1]] and a float scale"),
    ("10.2", lambda m, p: p / (m + p - 1), "for m=1, p=2 you return 1.0: draw that step"),
    ("12.1", (5, 5, 4, 4), "its answer is (8, 7, 6, 7)"),  # the real eos counted as a non-pad id
    ("12.1", (4, 4, 3, 4), "its answer is (8, 7, 6, 7)"),  # real tokens read off the ids
    ("13.1", 0.69, "logits [0, 0, 0, 0]"),  # ln 2
    ("13.1", 1.58, "logits [0, 0, 0, 0]"),  # log base 2
    ("10.2", lambda m, p: (p - 1) / m, "for m=1, p=2 you return 1.0"),
    ("02.1", [0, 1, 3], "rows like [21,22,23,24,25,26,0] (mask [1,1,1,1,1,1,0]), whose logits a mask of ones leaves"),
    ("02.1", [], "rows like [0,21,22,23,24,25,26] (mask [0,1,1,1,1,1,1]), whose logits a mask of ones changes"),
    ("02.1", [0, 2], "rows like [0,21,22,23,24,25,26] (mask [1,1,1,1,1,1,1]), whose logits a mask of ones leaves"),
    ("01.3", 6, "6 is where model.forward pools, the rightmost non-pad id, and the count rule does not look for it"),
    ("01.3", 5, "on the right row [5,6,7,8,0,0], where the review table's count column says 3"),
    ("01.3", 7, "7 is the last position of [0,5,6,0,7,8,9,0], a pad"),
    ("01.3", -1, "-1 is one before the first pad id, another rule's idea; try your way on the left row"),
    ("01.3", 8, "has positions 0 to 7, so 8 is none of them"),
    ("03.1", [True, False, True, False], "rows like [21,22,23,0,24,25,26,0], where the count rule misses"),
    ("03.1", [True, True, True, True], "rows like [0,0,0,21,22,23,24], where the count rule misses"),
    ("03.2", (4, 6), "on [0,0,5,6,0,7,8,0] your count-rule position is off: the count rule counts"),
    ("03.2", (3, 7), "on [0,0,5,6,0,7,8,0] your model.forward position holds the pad id"),
    ("03.3", [1, 3], "row 4 [5,6,0,7,0,0] is misjudged"),
    ("03.3", [1, 2, 3, 4], "row 2 [9,0,0,0,0,0] is misjudged"),
    ("04.1", [0], "row 3 [5,6,0,0] with mask [1,1,1,0] is misjudged"),
    ("04.1", [0, 2, 3], "row 2 [5,0,6,0] with mask [1,1,1,0] is misjudged"),
    (
        "04.2",
        lambda ids, mask, pad: _fix_by_hand(ids, pad),
        "on trailing_eos [5,6,7,0] (mask [1,1,1,1]) your rule pools 2, the true last real token is 3",
    ),
    ("04.2", lambda ids, mask, pad: mask.sum(-1) - 1, "on left [0,0,5,6,7,8] (mask [0,0,1,1,1,1]) your rule pools 3"),
    ("04.3", 4, "4 is where rightmost_non_pad pools"),
    ("04.3", 5, "5 is the true last real token"),
    ("05.1", (1, 4, 0), "take your three steps on another row of the task, [0,0,14,25,7,22,9,31]"),
    ("05.1", (2, 7, 2), "its answer is (1, 5, 1)"),
    # the wrong reason that passed when only the class was asked: no minus one, the 27's class
    ("05.1", (2, 5, 1), "its answer is (1, 5, 1)"),
    ("05.1", (2, 4, 1), "its answer is (1, 5, 1)"),
    ("05.2", [2, 3], "your answer misjudges r=4, a row like [0,0,0,0,5,6,7,8]"),
    ("05.2", [5, 6, 7], "misjudges r=2"),
    ("05.3", [4], "your answer leaves out a position: the pooled token sees itself"),
    ("05.3", [3, 4, 5, 6, 7], "a position after the one the count rule pools, the token 13: attention is causal"),
    ("06.1", [1], "row 2 [0,5,6,7,0,0] is misjudged"),
    ("06.1", [0, 1, 2], "row 0 [0,0,5,6,7,8] is misjudged"),
    ("06.2", [0, 1, 2, 3, 4, 5], "your answer holds padding"),
    ("06.2", [1, 2, 3], "leaves out a real token"),
    (
        "06.3",
        lambda mask: torch.ones(mask.shape[0], mask.shape[1], mask.shape[1], dtype=torch.bool).tril(),
        "position 0 may attend to position 0 in your mask, but 0 is padding",
    ),
    ("06.3", lambda mask: mask.bool()[:, None, :].expand(-1, mask.shape[1], -1), "but 2 is a later position"),
    ("07.1", "a", "on left [0,0,5,6,7,8] class a (count) and the expression pool different positions"),
    ("07.1", "b", "on right_pad_in_content [5,0,7,8,0,0] class b (first_pad_mod) and the expression pool different"),
    ("07.2", "right_pad_in_content", "both pool 3"),
    ("07.2", ([0, 0, 5], [0, 0, 1]), "both pool 2"),
    (
        "08.1",
        [(0, 4), (1, 4), (2, 1), (3, 4)],
        "row 0 [5,6,7,8,9] is misjudged",
    ),
    ("08.1", [(3, 4), (0, 4), (2, 1), (3, 4)], "row 3 [0,0,0,5,6] is misjudged"),
    ("08.2", ["count"], "you left out a rule that goes below 0 on a row: try each rule on [0]"),
    ("08.2", ["count", "first_pad", "rightmost_non_pad"], "rightmost_non_pad never goes below 0"),
    ("09.1", [3], "row 1 [0,5,6,7,0,0] is misjudged"),
    ("09.1", [0, 1, 3, 4, 5], "row 0 [5,6,0,0,0,0] is misjudged"),
    (
        "09.2",
        {("llama", "left"), ("llama", "right"), ("opt", "left"), ("opt", "right")},
        "your answer misjudges llama with right padding",
    ),
    ("09.2", {("qwen2", "left")}, "your answer misjudges llama with left padding"),
]


@pytest.mark.parametrize("key, answer, counterexample", WRONG)
def test_a_plausible_wrong_answer_gets_its_counterexample(key, answer, counterexample):
    text = status(key, answer)
    assert text.startswith("not yet:") and counterexample in text, text


def _fix_copied(ids, pad):
    positions = torch.arange(ids.shape[-1])
    return (positions * (ids != pad)).argmax(-1)


def _bubble_from_the_timeline(m, p):
    # notebook 02 cell "m = 1: 2 slots ...": its loop over timeline(), with p instead of 2
    from pp_demo.ranks.schedules import timeline

    forwards = [slot for _, slot, op in timeline("gpipe", p, m) if op.startswith("F")]
    return 1 - m / (max(forwards) + 1)


def _bubble_from_the_ideal_speedup(m, p):
    from pp_demo.instruments.bench.bounds import ideal_speedup  # imported where used, as a reader would

    return 1 - ideal_speedup(p, m) / p


def _transformers_mask(attention_mask):
    # transformers' own builder of model.forward's mask, as True/False: it is the answer
    batch, length = attention_mask.shape
    try:  # transformers 4.x
        from transformers.modeling_attn_mask_utils import _prepare_4d_causal_attention_mask
    except ImportError:  # 5.x builds masks from mask functions
        from transformers.masking_utils import and_masks, causal_mask_function, padding_mask_function

        allowed = and_masks(causal_mask_function, padding_mask_function(attention_mask.bool()))
        b, i, j = torch.arange(batch)[:, None, None], torch.arange(length)[None, :, None], torch.arange(length)
        return allowed(b, 0, i, j[None, None, :])
    additive = _prepare_4d_causal_attention_mask(attention_mask, (batch, length), torch.zeros(1), 0)
    return (additive == 0)[:, 0]


# Each: what a reader can pass the exercise with without its idea, where that comes from, and
# what the judge must say instead of "correct".
SHORTCUTS = [
    ("01.1", _fix_copied, "multiplies by arange, the expression printed above"),
    ("01.1", lambda ids, pad: rules.rightmost_non_pad(ids, pad), "calls pp_demo.core.rightmost_non_pad"),
    (
        "01.1",
        lambda ids, pad: pooled_positions("rightmost_non_pad", input_ids=ids, pad_token_id=pad),
        "calls pp_demo.pooling.positions.pooled_positions",
    ),
    ("01.1", lambda ids, pad: _fix_by_hand(ids[:1], pad).expand(ids.shape[0]), "row 1"),  # row 0's answer for all
    # the explorer's starting row and the review table's failing row, as a name or as lists
    ("01.2", "right_pad_in_content", "is the right_pad_in_content row printed above"),
    ("01.2", ([5, 0, 7, 8, 0, 0], [1, 1, 1, 1, 0, 0]), "is the right_pad_in_content row printed above"),
    ("01.2", ([5, 6, 7, 0], [1, 1, 1, 1]), "is the trailing_eos row printed above"),  # the two-row table
    ("01.3", 2, "the right_pad_in_content row [5,0,7,8,0,0]"),  # the count column's 2 for the pad-in-text rows
    ("01.3", 3, "the right_pad_in_content row [5,0,7,8,0,0]"),  # notebook 01 prints count - 1 = 3 for the left row
    ("10.1", 1, "the forwards-only answer"),  # "m =  4:  5 slots" printed above: 5 - 4 busy
    ("10.2", lambda m, p: 1 / (m + 1), "for m=1, p=3 you return 0.5"),
    ("12.1", (5, 4, 4, 4), "its answer is (8, 7, 6, 7)"),  # the count taken as the position
    ("13.1", 0.0, "logits [0, 0, 0, 0]"),  # zero logits read as zero loss  # the 2m/(m+1) line, p = 2 baked in
    ("10.2", _bubble_from_the_timeline, "calls pp_demo.ranks.schedules.timeline"),
    ("10.2", _bubble_from_the_ideal_speedup, "calls pp_demo.instruments.bench.bounds.ideal_speedup"),
    ("11.1", [0], "row 2 [0,0,3,0,4,5] is misjudged"),  # the notebook's left-padded row alone
    ("11.2", 2, "which of the four are floating point?"),  # the two tensors riding beside the hidden states
    ("02.1", [0, 2], "rows like [0,21,22,23,24,25,26] (mask [1,1,1,1,1,1,1])"),  # the rows that start with a pad
    ("03.1", [True, True, False, False], "rows like [0,0,0,21,22,23,24]"),  # the first-pad rule's verdicts
    # the count rule's and model.forward's positions printed above for left_pad_in_content
    ("03.2", (2, 5), "your count-rule position is off"),
    ("03.3", [0, 2, 3], "row 0 [5,6,7,8,9,10] is misjudged"),  # the ✗ rows
    # of the count column in the padding table `reproduce` prints just above
    ("04.1", [0, 1, 2, 3, 4], "row 1 [0,0,5,6]"),  # every row with a pad id in it
    ("04.2", lambda ids, mask, pad: rules.rightmost_attended(mask), "calls pp_demo.core.rightmost_attended"),
    ("04.3", 4, "4 is where rightmost_non_pad pools"),  # the first_pad_mod column of the tokenized pairs: 4
    ("04.3", 0, "0 is not where first_pad_mod pools"),  # first_pad_mod on right_pad_in_content, printed above
    ("05.1", (2, 4, 1), "take your three steps on another row"),  # the class read off the position, and the
    # count rule's position taken as "the number of real tokens" (the notebook's words, without the minus one)
    ("05.2", [2, 3, 4, 5, 6, 7], "misjudges r=5"),  # "pools a pad or an earlier real token": every r
    ("05.3", list(range(8)), "your answer holds a position after the one the count rule pools"),
    ("06.1", [3], "row 1 [5,6,0,7,0,0]"),  # notebook 06's prediction for its own batch
    ("06.2", [0, 1], "is causal attention"),  # what model.forward does, as the notebook says
    ("06.3", lambda mask: mask.bool()[:, None, None, :], "a tensor of shape (1, 1, 1, 6), not (1, 6, 6)"),  # the
    # (batch, 1, 1, L) mask whose shape the notebook prints for ColossalAI
    ("06.3", _transformers_mask, "your answer calls transformers."),  # modeling_attn_mask_utils or masking_utils
    ("07.1", "d", "on trailing_eos [5,6,7,0] class d (rightmost_attended) and the expression pool different"),  # its
    # shape: a cumsum and an argmax, like attended_cumsum, listed in class (d) just above
    ("07.2", "trailing_eos", "the trailing-eos row"),  # the row notebook 07 shows
    ("08.1", [(2, 5), (1, 3), (1, 5)], "a list of 4"),  # notebook 08's printed line for its own batch
    (
        "08.2",
        ["first_pad"],
        "you left out a rule that goes below 0 on a row: try each rule on [0]",
    ),  # the -1s notebook 08 prints are first_pad's
    ("09.1", [1, 3, 4], "row 4 [5,6,7,8,9,0]"),  # the "wrong: True" pattern printed for another five rows
    (
        "09.2",
        {("llama", "left"), ("qwen2", "left"), ("opt", "left")},
        "your answer misjudges qwen2 with left padding",
    ),  # claim 2's printed line for the old code in all three files
    (
        "09.2",
        {("llama", "left")},
        "your answer misjudges opt with left padding",
    ),  # its line for the change minus llama.py
]


@pytest.mark.parametrize("key, answer, problem", SHORTCUTS)
def test_a_shortcut_is_not_correct(key, answer, problem):
    text = status(key, answer)
    assert text.startswith("not yet:") and problem in text, text


def test_every_exercise_has_a_right_answer_two_wrong_ones_and_a_shortcut():
    keys = set(EXERCISES)
    assert {key for key, _ in RIGHT} == keys
    assert {key for key in keys if sum(k == key for k, *_ in WRONG) < 2} == set()
    assert {key for key, *_ in SHORTCUTS} == keys


def _printed_text(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    return "\n".join(
        "".join(output.get("text") or output.get("data", {}).get("text/plain", ""))
        for cell in cells
        for output in cell.get("outputs", [])
    )


def _as_printed(answer) -> set[str]:
    """How a printed line would show the answer: its repr, with or without spaces."""
    shown = repr(sorted(answer)) if isinstance(answer, (set, frozenset)) else repr(answer)
    return {shown, shown.replace(" ", "")}


@pytest.mark.parametrize(
    "key",
    # the answers a line could print whole: a list, pair or set (an int or a name is printed
    # everywhere, and a function is not printed; those exercises have their shortcut above)
    [k for k, a in SOLUTIONS.items() if isinstance(a, (list, tuple, set))],
)
def test_no_output_of_its_notebook_prints_the_answer(key, notebooks):
    notebook = next(p for p in notebooks if p.name.startswith(f"{key[:2]}_"))
    text = _printed_text(notebook)
    for shown in _as_printed(SOLUTIONS[key]):
        assert not re.search(rf"(?<![\w-]){re.escape(shown)}(?!\w)", text), f"{notebook.name} prints {shown}"


def test_a_refused_function_is_caught_however_it_was_imported():
    # a name bound before judging (as a notebook's import cell does) is the same code object
    from pp_demo.core import rightmost_non_pad

    text = status("01.1", lambda ids, pad: rightmost_non_pad(ids, pad))
    assert text == "not yet: your answer calls pp_demo.core.rightmost_non_pad: write it yourself from the definition"


def test_judging_leaves_no_profiler_behind():
    import sys

    status("01.1", lambda ids, pad: rules.rightmost_non_pad(ids, pad))
    assert sys.getprofile() is None
    ids = torch.tensor([[0, 5, 6]])
    assert rules.rightmost_non_pad(ids, 0).tolist() == [2]


@pytest.mark.parametrize(
    "key, answer", [("03.1", [True] * 4), ("03.3", [0]), ("04.1", [1]), ("06.1", [0]), ("08.1", [(0, 0)] * 4)]
)
def test_every_wrong_attempt_gets_a_counterexample(key, answer):
    # a row it misjudges, with the reason, on the first try and on every later one
    tries = [status(key, answer) for _ in range(3)]
    room = ("not yet: your reasoning misjudges rows like ",)  # an exercise done in the room: another row
    assert all(t.startswith(("not yet: row ", *room)) for t in tries), tries


def test_the_06_3_judge_is_written_from_the_definition_not_the_solution():
    # the judge's entry-by-entry definition, against masks drawn at random and one flipped entry
    pick = random.Random(0)
    for _ in range(5):
        mask = torch.tensor([[pick.choice((0, 1)) for _ in range(5)] for _ in range(3)])
        want = _causal_by_hand(mask)
        assert nb06._first_wrong_entry(want, mask) is None
        flipped = want.clone()
        flipped[1, 3, 2] = ~flipped[1, 3, 2]
        assert nb06._first_wrong_entry(flipped, mask) == (1, 3, 2)


def test_the_08_1_model_of_the_legacy_exporter_gives_what_notebook_08_measured():
    from pp_demo.exercises import nb08

    # notebook 08 runs first_pad through the legacy export on [left, right, unpadded] and
    # prints the (row, position) each row reads: [(2, 5), (1, 3), (1, 5)]
    batch = ((0, 0, 5, 6, 7, 8), (5, 6, 7, 8, 0, 0), (5, 6, 7, 8, 9, 10))
    assert [nb08._legacy_reads(batch, b) for b in range(3)] == [(2, 5), (1, 3), (1, 5)]


def test_only_the_exercises_whose_answer_is_a_function_refuse_a_library():
    # a value answer is worked out in the reader's own cell: there is nothing to refuse
    refusing = {key: exercise.refuse for key, exercise in EXERCISES.items() if exercise.refuse}
    assert set(refusing) == {"01.1", "10.2", "04.2", "06.3"}
    rules = {"pp_demo.pooling.positions", "pp_demo.core.count_minus_one", "pp_demo.core.rightmost_attended"}
    assert all(rules <= set(refusing[key]) for key in ("01.1", "04.2", "06.3"))


def _from_the_right_mentioning_arange(input_ids, pad_token_id):
    # no arange here (the fix's arange is what this avoids): reads the row from its right end
    real = input_ids != pad_token_id
    from_right = real.flip(-1).int().argmax(-1)
    return torch.where(real.any(-1), input_ids.shape[-1] - 1 - from_right, 0)


def test_a_refusal_judges_the_code_not_its_comments():
    assert status("01.1", _from_the_right_mentioning_arange) == "correct"
    assert status("01.1", _fix_copied).startswith("not yet:")  # the code itself calls arange


@pytest.mark.parametrize("key", ["03.1", "03.2", "05.1", "05.2", "05.3"])
def test_each_common_wrong_answer_gets_the_same_counterexample_on_every_try(key):
    # a counterexample (a row written out, a row of the batch, a row size), the same one on the
    # first try and every later one; what it must not show is in tests/exercises/test_wrong_tries.py
    for wrong in EXERCISES[key].wrong_answers:
        tries = {status(key, wrong.answer) for _ in range(3)}
        assert len(tries) == 1, tries
        (text,) = tries
        assert text.startswith("not yet: ") and re.search(r"\[\d|row \d|r=\d", text), text
