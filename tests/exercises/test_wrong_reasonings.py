"""The exercises done in the room refuse every tempting wrong reasoning, and no such reasoning
lands on the solution.

Each wrong reasoning is written here as a small function from the exercise's rows (as its
question prints them) to the answer it would give: off by one, counting from 1, the token instead
of its class, the class read off the position, the other reference, the rows that start with a
pad, the left-padded rows, the shape of a printed line. The right reasoning is written the same
way, from the definitions (the count rule: non-pad ids minus one; ``model.forward``: the rightmost
non-pad id; the task's label: the last real token's id modulo 3), never read from the judges.
A wrong try's message must point to another row, never to an element of the answer.
"""

import re

import pytest
import torch

from pp_demo import build_model, split_model
from pp_demo.exercises import EXERCISES, status

PAD = 0

# ---- the rows, as the questions print them


def _rows(question: str) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in m.split(",")) for m in re.findall(r"\[([\d,\s]+)\]", question)]


ROW_01_3 = (0, 5, 6, 0, 7, 8, 9, 0)
ROWS_02_1 = [(ids, mask) for ids, mask in zip(*[iter(_rows(EXERCISES["02.1"].question))] * 2, strict=True)]
ROWS_03_1 = _rows(EXERCISES["03.1"].question)
ROW_05_1, MASK_05_1 = _rows(EXERCISES["05.1"].question)


def test_the_rows_are_the_ones_the_questions_print():
    assert str(list(ROW_01_3)).replace(" ", "") in EXERCISES["01.3"].question.replace(" ", "")
    assert len(ROWS_02_1) == 4 and len(ROWS_03_1) == 4 and len(ROW_05_1) == 8


# ---- the definitions


def non_pad(ids):
    return [p for p, t in enumerate(ids) if t != PAD]


def count_rule(ids):
    return len(non_pad(ids)) - 1


def rightmost_non_pad(ids):
    return max(non_pad(ids))


# ---- 01.3: which position does the count rule pool?


def right_01_3(ids):
    return count_rule(ids)


WRONG_01_3 = {
    "off by one: forgets the minus one": lambda ids: len(non_pad(ids)),
    "counts positions from 1": lambda ids: count_rule(ids) + 1,
    "the token instead of its position": lambda ids: ids[count_rule(ids)],
    "the other reference: model.forward's position": rightmost_non_pad,
    "counts every id, pads included": lambda ids: len(ids) - 1,
    "counts the pads": lambda ids: ids.count(PAD) - 1,
    "steps back from the first pad": lambda ids: (ids.index(PAD) - 1) % len(ids),
}


@pytest.mark.parametrize("name", WRONG_01_3)
def test_01_3_refuses_each_wrong_reasoning(name):
    answer = WRONG_01_3[name](list(ROW_01_3))
    assert answer != right_01_3(list(ROW_01_3)), name
    assert status("01.3", answer).startswith("not yet: "), name


# ---- 02.1: which rows' logits change when the last stage gets a mask of ones?


def right_02_1(rows):
    # attention is causal: the pooled position reads itself and the positions before it
    return [i for i, (ids, mask) in enumerate(rows) if 0 in mask[: rightmost_non_pad(ids) + 1]]


WRONG_02_1 = {
    "the rows that start with the pad id": lambda rows: [i for i, (ids, _) in enumerate(rows) if ids[0] == PAD],
    "the left-padded rows": lambda rows: [i for i, (_, mask) in enumerate(rows) if mask[0] == 0],
    "every row with padding": lambda rows: [i for i, (_, mask) in enumerate(rows) if 0 in mask],
    "a pad id before the pooled token (ids, not mask)": lambda rows: [
        i for i, (ids, _) in enumerate(rows) if PAD in ids[: rightmost_non_pad(ids)]
    ],
    "padding after the pooled token (forgets causality)": lambda rows: [
        i for i, (ids, mask) in enumerate(rows) if 0 in mask[rightmost_non_pad(ids) + 1 :]
    ],
    "every row with a pad id": lambda rows: [i for i, (ids, _) in enumerate(rows) if PAD in ids],
    "no row: the mask only matters to the pooling": lambda rows: [],
    "the rows the count rule gets wrong": lambda rows: [
        i for i, (ids, _) in enumerate(rows) if count_rule(ids) != rightmost_non_pad(ids)
    ],
}


@pytest.mark.parametrize("name", WRONG_02_1)
def test_02_1_refuses_each_wrong_reasoning(name):
    answer = WRONG_02_1[name](ROWS_02_1)
    assert sorted(answer) != sorted(right_02_1(ROWS_02_1)), name
    assert status("02.1", answer).startswith("not yet: "), name


def test_02_1_each_wrong_answer_the_guide_explains_is_where_a_wrong_reasoning_lands():
    landed = {tuple(sorted(f(ROWS_02_1))): name for name, f in WRONG_02_1.items()}
    for wrong in EXERCISES["02.1"].wrong_answers:
        assert tuple(sorted(wrong.answer)) in landed, wrong.answer
    # [0] is the mask's first position read as the only padding that counts: the note must say it
    # is the mask (row 2 starts with the pad id too, as a real token) and name the row it misses
    assert landed[(0,)] == "the left-padded rows"
    (note,) = [wrong.reveals for wrong in EXERCISES["02.1"].wrong_answers if list(wrong.answer) == [0]]
    assert re.search(r"\bmask\b", note) and "row 2" in note and "row 3" in note


def test_02_1_the_rows_whose_logits_change_are_those_model_forward_changes():
    # the specification itself: the tiny Llama's last stage run with the true mask and with ones
    model = build_model("llama")
    first, last = split_model(model, rule="rightmost_non_pad")
    ids = torch.tensor([r[0] for r in ROWS_02_1])
    mask = torch.tensor([r[1] for r in ROWS_02_1])
    with torch.no_grad():
        hidden = first(ids, mask)
        true, ones = last(hidden, ids, mask), last(hidden, ids, torch.ones_like(mask))
    changed = [i for i in range(len(ROWS_02_1)) if not torch.allclose(true[i], ones[i], atol=1e-6, rtol=0)]
    assert changed == right_02_1(ROWS_02_1) == EXERCISES["02.1"].solution
    assert status("02.1", changed) == "correct"


# ---- 03.1: the count rule's reproduction line


def right_03_1(rows):
    return [count_rule(r) == rightmost_non_pad(r) for r in rows]


def _first_pad(ids):
    return (ids.index(PAD) - 1) % len(ids) if PAD in ids else len(ids) - 1


WRONG_03_1 = {
    "right padding is safe": lambda rows: [r[-1] == PAD or PAD not in r for r in rows],
    "left padding fails, the rest passes": lambda rows: [r[0] != PAD for r in rows],
    "any padding fails": lambda rows: [PAD not in r for r in rows],
    "judges the first-pad rule instead": lambda rows: [_first_pad(list(r)) == rightmost_non_pad(r) for r in rows],
    "counts from 1": lambda rows: [count_rule(r) + 1 == rightmost_non_pad(r) for r in rows],
    "a pad id inside the text fails, the rest passes": lambda rows: [
        not any(t == PAD for t in r[min(non_pad(r)) : max(non_pad(r))]) for r in rows
    ],
    "the printed line's shape, [False, True, ...]": lambda rows: [i % 2 == 1 for i in range(len(rows))],
    "the right line, reversed": lambda rows: right_03_1(rows)[::-1],
}


@pytest.mark.parametrize("name", WRONG_03_1)
def test_03_1_refuses_each_wrong_reasoning(name):
    answer = WRONG_03_1[name](ROWS_03_1)
    assert answer != right_03_1(ROWS_03_1), name
    assert status("03.1", answer).startswith("not yet: "), name


# ---- 05.1: (label, the count rule's position, the class of the token there)


def right_05_1(ids, mask):
    last = max(p for p, m in enumerate(mask) if m)
    pooled = count_rule(ids)
    return ids[last] % 3, pooled, ids[pooled] % 3


WRONG_05_1 = {
    "the class read off the position": lambda ids, mask: (
        right_05_1(ids, mask)[0],
        count_rule(ids),
        count_rule(ids) % 3,
    ),
    "the token instead of its class": lambda ids, mask: (
        right_05_1(ids, mask)[0],
        count_rule(ids),
        ids[count_rule(ids)],
    ),
    "off by one: no minus one": lambda ids, mask: (
        right_05_1(ids, mask)[0],
        count_rule(ids) + 1,
        ids[count_rule(ids) + 1] % 3,
    ),
    "the other reference: the last real token pooled": lambda ids, mask: (ids[-1] % 3, len(ids) - 1, ids[-1] % 3),
    "the label read off the first real token": lambda ids, mask: (
        ids[min(non_pad(ids))] % 3,
        count_rule(ids),
        ids[count_rule(ids)] % 3,
    ),
    "the position counted within the text": lambda ids, mask: (
        right_05_1(ids, mask)[0],
        count_rule(ids) - ids.count(PAD),
        ids[count_rule(ids)] % 3,
    ),
    "label and class swapped": lambda ids, mask: (
        right_05_1(ids, mask)[2],
        right_05_1(ids, mask)[1],
        right_05_1(ids, mask)[0],
    ),
}


@pytest.mark.parametrize("name", WRONG_05_1)
def test_05_1_refuses_each_wrong_reasoning(name):
    answer = WRONG_05_1[name](list(ROW_05_1), list(MASK_05_1))
    assert answer != right_05_1(list(ROW_05_1), list(MASK_05_1)), name
    assert status("05.1", answer).startswith("not yet: "), name


# ---- the solutions, and what a wrong try is told

RIGHT = {
    "01.3": right_01_3(list(ROW_01_3)),
    "02.1": right_02_1(ROWS_02_1),
    "03.1": right_03_1(ROWS_03_1),
    "05.1": right_05_1(list(ROW_05_1), list(MASK_05_1)),
}
WRONG = {"01.3": WRONG_01_3, "02.1": WRONG_02_1, "03.1": WRONG_03_1, "05.1": WRONG_05_1}
ASKED = {"01.3": [ROW_01_3], "02.1": [ids for ids, _ in ROWS_02_1], "03.1": ROWS_03_1, "05.1": [ROW_05_1]}


@pytest.mark.parametrize("key", RIGHT)
def test_the_right_reasoning_is_correct(key):
    assert status(key, RIGHT[key]) == "correct"


def _wrong_answers(key):
    if key == "01.3":
        return [f(list(ROW_01_3)) for f in WRONG_01_3.values()]
    if key == "02.1":
        return [f(ROWS_02_1) for f in WRONG_02_1.values()]
    if key == "03.1":
        return [f(ROWS_03_1) for f in WRONG_03_1.values()]
    return [f(list(ROW_05_1), list(MASK_05_1)) for f in WRONG_05_1.values()]


@pytest.mark.parametrize("key", ["02.1", "03.1", "05.1"])
def test_a_wrong_try_points_to_another_row_never_to_the_element_to_change(key):
    for answer in _wrong_answers(key):
        said = status(key, answer)
        shown = _rows(said)
        assert shown, said  # a counterexample row
        assert not set(shown) & set(ASKED[key]), said  # not a row of the exercise
        assert not re.search(r"\brow \d\b|\brows? \d+ (and|or) \d\b", said), said  # no index to flip
        assert not re.search(r"\byour (label|position|class|count)", said), said  # no element named
