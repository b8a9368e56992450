"""Exercises of notebook 02 · the two-stage pipeline (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import forward_pools, judge_picked_rows, register, wrong_answer

# exercise 02.1: (input_ids, attention_mask) of a micro-batch whose last stage is handed a mask of
# ones; pad id 0, padding carries it. No row notebook 02 prints has these padding layouts.
_MASK_ROWS = (
    ((0, 5, 6, 7, 8, 9), (0, 1, 1, 1, 1, 1)),  # one pad in front
    ((5, 6, 7, 8, 9, 0), (1, 1, 1, 1, 1, 0)),  # one pad behind
    ((0, 5, 6, 7, 8, 0), (0, 1, 1, 1, 1, 0)),  # one pad on each side
)


def _pad_before_the_pooled_token(row: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
    """The definition: with causal attention the pooled position reads itself and the positions
    before it, so a mask of ones changes its hidden state only where one of those is padding."""
    ids, mask = row
    return any(m == 0 for m in mask[: forward_pools(ids, PAD) + 1])


def _shown(row: tuple[tuple[int, ...], tuple[int, ...]]) -> str:
    ids, mask = row
    return f"{row_text(ids)} (mask {row_text(mask)})"


@register(
    "02.1",
    "The last stage gets the micro-batch's attention mask from the schedule. Suppose a schedule handed "
    "it a mask of ones instead (the first stage still gets the true one), with the last stage pooling "
    "as model.forward does. On which rows of the micro-batch [0,5,6,7,8,9] (mask [0,1,1,1,1,1]), "
    "[5,6,7,8,9,0] (mask [1,1,1,1,1,0]) and [0,5,6,7,8,0] (mask [0,1,1,1,1,0]) would the logits change? "
    "A list of row indices.",
    solution=[0, 2],
    why=(
        "attention is causal: the pooled position (the last real token) reads itself and the positions "
        "before it. A mask of ones lets it read a pad only where a pad comes before it: rows 0 and 2. "
        "Row 1's pad comes after the pooled token, which never reads it"
    ),
    wrong=(
        wrong_answer(
            [0, 1, 2], "forgets that attention is causal: a pad after the pooled token is never read, masked or not"
        ),
        wrong_answer([], "thinks the mask matters to the pooling only; the last stage's layers read it too"),
        wrong_answer([0], "expects only left padding to matter: a pad in front is read whatever comes after it"),
    ),
    debrief=(
        "ask a pair that answered [0, 1, 2] for their counterexample, row 1: its pad sits after the pooled "
        "token, and causal attention never reads a later position, masked or not. The mask the schedule "
        "hands the last stage matters only for pads before the pooled token; that is why a pipeline passes "
        "the mask to every stage, and why in notebook 03 the pooling, not the mask, is the culprit"
    ),
)
def _judge_mask_of_ones(answer: object) -> str | None:
    how = "find the token the last stage pools, then ask whether a pad comes before it (attention is causal)"
    return judge_picked_rows(answer, _MASK_ROWS, _pad_before_the_pooled_token, how, shown=_shown)
