"""Exercises of notebook 03 · the bug reproduced (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import (
    count_misses,
    count_pools,
    forward_pools,
    int_pair,
    judge_picked_rows,
    register,
    unordered,
    wrong_answer,
)

# exercise 03.1: row 1 is left-padded but the first-pad rule gets it right (so mixing up the rules
# shows), row 2 is padded on the right with a pad id inside (so "right padding is safe" shows)
_THREE_SIDES = ((7, 8, 9, 10, 11, 0), (0, 0, 0, 7, 8, 9), (7, 8, 0, 9, 10, 0), (0, 7, 8, 9, 0, 0))
_TWO_POSITIONS = (0, 0, 5, 6, 0, 7, 8, 0)  # exercise 03.2: padded on both sides, a pad id inside the text
_MIXED_BATCH = ((5, 6, 7, 8, 9, 10), (0, 0, 0, 0, 0, 9), (9, 0, 0, 0, 0, 0), (0, 5, 6, 7, 8, 0), (5, 6, 0, 7, 0, 0))

_HOW = "count its non-pad ids for the count rule, and find its rightmost non-pad id for model.forward"


@register(
    "03.1",
    "Predict the count rule's reproduction line for a batch of four rows (pad id 0): [7,8,9,10,11,0], "
    "[0,0,0,7,8,9], [7,8,0,9,10,0] and [0,7,8,9,0,0]. A list of bools.",
    solution=[True, False, False, False],
    why=(
        "the count rule matches model.forward only when no pad id comes before the last non-pad id: row 0 "
        "(one pad at the end) matches; rows 1 and 3 have pads in front, row 2 a pad id inside the text, and "
        "on each the count lands before the last non-pad id"
    ),
    wrong=(
        wrong_answer(
            [True, False, True, False],
            "thinks a row padded on the right is safe: the pad id inside row 2 is not counted either",
        ),
        wrong_answer(
            [True, True, False, False],
            "judges by the first-pad rule, which a row that starts with its pads rescues (-1 wraps to the end)",
        ),
        wrong_answer(
            [False, True, False, True],
            "copies the shape of the reproduction's printed line instead of judging each row",
        ),
    ),
    debrief=(
        "ask who marked row 2 True: it is padded on the right, but the pad id inside the text is not counted, "
        "so the count lands one place early. Then row 1: the first-pad rule gets it right, the count rule "
        "does not. What decides is not the padding side nor the row's place in the batch but whether a pad "
        "id comes before the last non-pad id (the notebook's key point)"
    ),
)
def _judge_three_sides(answer: object) -> str | None:
    if not isinstance(answer, (list, tuple)) or not all(isinstance(a, bool) for a in answer):
        return "give a list of True or False, one per row, like the reproduction line"
    if len(answer) != len(_THREE_SIDES):
        return f"the batch has {len(_THREE_SIDES)} rows, your list has {len(answer)}"
    # the line says True where the count rule pools where model.forward does: its misses are the False rows
    said = ("where the count rule misses model.forward", "where the count rule matches model.forward")
    misses = [i for i, matches in enumerate(answer) if not matches]
    return judge_picked_rows(misses, _THREE_SIDES, count_misses, _HOW, said=said)


@register(
    "03.2",
    "On the row [0,0,5,6,0,7,8,0] (pad id 0), which position does the count rule pool, and "
    "which does model.forward pool? A pair of ints (count rule, model.forward).",
    solution=(3, 6),
    why="four non-pad ids, minus one: position 3 (the 6, a real token but not the last); the 8 at 6 is the rightmost",
    wrong=(
        wrong_answer((4, 6), "counts the non-pad ids but forgets the minus one"),
        wrong_answer((3, 7), "takes the row's last position for model.forward's: it skips the trailing pad"),
        wrong_answer((6, 6), "expects the count rule to find the last real token; it counts, it never looks"),
        wrong_answer((6, 3), "gives the pair in the wrong order, or swaps what the two rules do"),
    ),
)
def _judge_two_positions(answer: object) -> str | None:
    pair = int_pair(answer)
    if pair is None and unordered(answer):  # {6, 3} is {3, 6}: which number is which rule's is lost
        kind = type(answer).__name__
        return f"a {kind} has no order: give a tuple (where the count rule pools, where model.forward pools)"
    if pair is None:
        return "give a pair of ints: (where the count rule pools, where model.forward pools)"
    row = row_text(_TWO_POSITIONS)
    said_count, said_forward = pair
    count, forward = count_pools(_TWO_POSITIONS, PAD), forward_pools(_TWO_POSITIONS, PAD)
    if said_count != count:  # a swapped pair is judged like any other: no hint that swapping it helps
        also = ", as if it looked for the last real token" if said_count == forward == said_forward else ""
        return (
            f"on {row} your count-rule position is off{also}: the count rule counts the non-pad ids and steps back one"
        )
    if said_forward != forward:
        holds_pad = 0 <= said_forward < len(_TWO_POSITIONS) and _TWO_POSITIONS[said_forward] == PAD
        what = "holds the pad id" if holds_pad else "is off"
        return f"on {row} your model.forward position {what}: it pools the rightmost id that is not the pad id"
    return None


@register(
    "03.3",
    "Which rows (indices) of the five-row mixed batch does the count rule pool at a "
    "different position from model.forward?",
    solution=[1, 3, 4],
    why="count - 1 is right only when all real tokens come first, none equal to pad",
    wrong=(
        wrong_answer(
            [1, 3], "misses the right-padded row with a pad id inside the text (row 4): not only left padding breaks it"
        ),
        wrong_answer(
            [1, 2, 3, 4],
            "thinks any padding breaks the count rule; row 2 holds one real token first, so the count is right",
        ),
    ),
)
def _judge_wrong_rows(answer: object) -> str | None:
    return judge_picked_rows(answer, _MIXED_BATCH, count_misses, _HOW)
