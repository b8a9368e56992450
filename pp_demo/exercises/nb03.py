"""Exercises of notebook 03 · the bug reproduced (checked by ``pp_demo.exercises.check``)."""

import torch

from ..cases import PAD, as_batch
from ..rules import count_minus_one, rightmost_non_pad
from .core import index_list, register, row_text

_SWAPPED_REPRO = ("right", "left")
_SEED_LEFT_PADDED = ((0, 0, 5, 6, 7, 8), (0, 5, 6, 7, 8, 9))
_MIXED_BATCH = ((5, 6, 7, 8, 9, 10), (0, 0, 0, 0, 0, 9), (9, 0, 0, 0, 0, 0), (0, 5, 6, 7, 8, 0), (5, 6, 0, 7, 0, 0))




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
            return (f"row {i} {row_text(ids[i])}: the count rule pools {count}, model.forward pools "
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
    answer = index_list(answer, ids.shape[0])
    if isinstance(answer, str):
        return answer
    pairs = _count_vs_forward(ids)
    for i, (count, forward) in enumerate(pairs):
        if (i in answer) != (count != forward):
            if count == forward:
                return f"row {i} {row_text(ids[i])}: the count rule pools {count} and model.forward pools {forward} too"
            return f"row {i} {row_text(ids[i])}: the count rule pools {count}, model.forward pools {forward}"
    return None
