"""Exercises of notebook 03 · the bug reproduced (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import count_misses, count_pools, forward_pools, int_pair, judge_picked_rows, register, wrong_answer

_THREE_SIDES = ((7, 8, 9, 0, 0, 0), (0, 0, 0, 7, 8, 9), (0, 7, 8, 9, 0, 0))  # right, left, both sides
_TWO_POSITIONS = (0, 0, 5, 6, 0, 7, 8, 0)  # exercise 03.2: padded on both sides, a pad id inside the text
_MIXED_BATCH = ((5, 6, 7, 8, 9, 10), (0, 0, 0, 0, 0, 9), (9, 0, 0, 0, 0, 0), (0, 5, 6, 7, 8, 0), (5, 6, 0, 7, 0, 0))

_HOW = "count its non-pad ids for the count rule, and find its rightmost non-pad id for model.forward"


@register(
    "03.1",
    "Predict the count rule's reproduction line for a batch of three rows, right-padded "
    "[7,8,9,0,0,0], left-padded [0,0,0,7,8,9] and padded on both sides [0,7,8,9,0,0]. "
    "A list of bools.",
    solution=[True, False, False],
    why=(
        "three non-pad ids on each row, so the count rule pools 2 on each; model.forward pools the "
        "rightmost non-pad id: 2, 5 and 3"
    ),
    wrong=(
        wrong_answer(
            [True, False, True],
            "thinks only a row whose text ends the row goes wrong: the pad in front of row 2 shifts it too",
        ),
        wrong_answer(
            [False, True, False],
            "copies the order of the reproduction's printed line (left-padded first) instead of judging each row",
        ),
    ),
)
def _judge_three_sides(answer: object) -> str | None:
    if not isinstance(answer, (list, tuple)) or not all(isinstance(a, bool) for a in answer):
        return "give a list of True or False, one per row, like the reproduction line"
    if len(answer) != len(_THREE_SIDES):
        return f"the batch has {len(_THREE_SIDES)} rows, your list has {len(answer)}"
    # the line says True where the count rule pools where model.forward does: its misses are the False rows
    return judge_picked_rows([i for i, said in enumerate(answer) if not said], _THREE_SIDES, count_misses, _HOW)


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
        wrong_answer((6, 3), "gives the pair in the wrong order: (count rule, model.forward)"),
    ),
)
def _judge_two_positions(answer: object) -> str | None:
    pair = int_pair(answer)
    if pair is None:
        return "give a pair of ints: (where the count rule pools, where model.forward pools)"
    row = row_text(_TWO_POSITIONS)
    said_count, said_forward = pair
    count, forward = count_pools(_TWO_POSITIONS, PAD), forward_pools(_TWO_POSITIONS, PAD)
    if (said_count, said_forward) == (forward, count) != (count, forward):
        return f"on {row} your two positions are the other way round: the pair is (count rule, model.forward)"
    if said_count != count:
        also = ", as if it looked for the last real token" if said_count == forward else ""
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
