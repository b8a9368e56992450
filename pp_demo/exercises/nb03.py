"""Exercises of notebook 03 · the bug reproduced (checked by ``pp_demo.exercises.check``).

Verdicts come from the definitions, counted in plain Python: the count rule lands on
(number of non-pad ids - 1) wrapped to the row, ``model.forward`` on the rightmost non-pad id."""

from collections.abc import Sequence

from pp_demo.pooling.cases import PAD, row_text

from .core import WrongAnswer, count_pools, forward_pools, index_list, one_counterexample, register

_SWAPPED_REPRO = ((5, 6, 7, 8, 0, 0), (0, 0, 5, 6, 7, 8))
_LEFT_PADDED = ((0, 0, 5, 6, 7, 8), (0, 5, 6, 7, 8, 9))
_MIXED_BATCH = ((5, 6, 7, 8, 9, 10), (0, 0, 0, 0, 0, 9), (9, 0, 0, 0, 0, 0), (0, 5, 6, 7, 8, 0), (5, 6, 0, 7, 0, 0))


def _why(i: int, row: Sequence[int]) -> str:
    count, forward = count_pools(row, PAD), forward_pools(row, PAD)
    also = " too" if count == forward else ""
    return f"row {i} {row_text(row)}: the count rule pools {count}, model.forward pools {forward}{also}"


def _judge_verdicts(key: str, answer: object, rows: Sequence[Sequence[int]]) -> str | None:
    if not isinstance(answer, (list, tuple)) or not all(isinstance(a, bool) for a in answer):
        return "give a list of True or False, one per row, like the reproduction line"
    if len(answer) != len(rows):
        return f"the batch has {len(rows)} rows, your list has {len(answer)}"
    misjudged = [
        _why(i, row)
        for i, (said, row) in enumerate(zip(answer, rows, strict=True))
        if said != (count_pools(row, PAD) == forward_pools(row, PAD))
    ]
    return one_counterexample(key, misjudged)


@register(
    "03.1",
    "Predict the count rule's reproduction line with the rows swapped: right-padded "
    "[5,6,7,8,0,0] first, left-padded [0,0,5,6,7,8] second. A list of bools.",
    solution=[True, False],
    why="the verdict belongs to the row, not to its place in the batch",
    wrong=(
        WrongAnswer([False, True], None, "reads the verdict as belonging to the place in the batch, not to the row"),
    ),
)
def _judge_swapped_reproduction(answer: object) -> str | None:
    return _judge_verdicts("03.1", answer, _SWAPPED_REPRO)


@register(
    "03.2",
    "Predict the count rule's verdict per row on a left-padded batch such as the pull "
    "request's test uses, [[0,0,5,6,7,8], [0,5,6,7,8,9]]. A list of bools.",
    solution=[False, False],
    why="any pad in front moves the count away from the last position",
    wrong=(
        WrongAnswer(
            [False, True],
            None,
            "thinks a single pad in front is harmless: any pad in front moves the count off the last token",
        ),
        WrongAnswer([True, True], None, "thinks the pull request's test batch passes; both rows are left-padded"),
    ),
)
def _judge_left_batch(answer: object) -> str | None:
    return _judge_verdicts("03.2", answer, _LEFT_PADDED)


@register(
    "03.3",
    "Which rows (indices) of the five-row mixed batch does the count rule pool at a "
    "different position from model.forward?",
    solution=[1, 3, 4],
    why="count - 1 is right only when all real tokens come first, none equal to pad",
    wrong=(
        WrongAnswer(
            [1, 3],
            None,
            "misses the right-padded row with a pad id inside the text (row 4): not only left padding breaks it",
        ),
        WrongAnswer(
            [1, 2, 3, 4],
            None,
            "thinks any padding breaks the count rule; row 2 holds one real token first, so the count is right",
        ),
    ),
)
def _judge_wrong_rows(answer: object) -> str | None:
    answer = index_list(answer, len(_MIXED_BATCH))
    if isinstance(answer, str):
        return answer
    misjudged = [
        _why(i, row)
        for i, row in enumerate(_MIXED_BATCH)
        if (i in answer) != (count_pools(row, PAD) != forward_pools(row, PAD))
    ]
    return one_counterexample("03.3", misjudged)
