"""Exercises of notebook 02 · the two-stage pipeline (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import forward_pools, judge_picked_rows, register, wrong_answer

# exercise 02.1: (input_ids, attention_mask) of a micro-batch whose last stage is handed a mask of
# ones; pad id 0. Chosen so that no shortcut lands on the answer: row 2 starts with the pad id but
# the mask says it is real (a bos that shares id 0), so "the rows that start with a pad" is wrong;
# row 3 has a masked position inside, so "the left-padded rows" is wrong too. No row notebook 02
# prints has these layouts.
_MASK_ROWS = (
    ((0, 5, 6, 7, 8, 9), (0, 1, 1, 1, 1, 1)),  # one pad in front
    ((5, 6, 7, 8, 9, 0), (1, 1, 1, 1, 1, 0)),  # one pad behind
    ((0, 5, 6, 7, 8, 9), (1, 1, 1, 1, 1, 1)),  # the pad id in front, but a real token: no padding
    ((5, 6, 0, 7, 8, 0), (1, 1, 0, 1, 1, 0)),  # a masked position inside the text, one pad behind
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
    "[5,6,7,8,9,0] (mask [1,1,1,1,1,0]), [0,5,6,7,8,9] (mask [1,1,1,1,1,1]) and [5,6,0,7,8,0] "
    "(mask [1,1,0,1,1,0]) would the logits change? A list of row indices.",
    solution=[0, 3],
    why=(
        "attention is causal: the pooled position (the rightmost non-pad id) reads itself and the positions "
        "before it. A mask of ones changes what it reads only where the true mask hides one of those: "
        "rows 0 and 3. Row 1's masked pad comes after the pooled token, and row 2's mask is all ones already"
    ),
    wrong=(
        wrong_answer(
            [0, 2], "takes the rows that start with the pad id: row 2's first token is real, the mask says so"
        ),
        wrong_answer(
            [0],
            "takes only padding in front, read from the mask (so not row 2, whose first token is real): row 3's "
            "masked position inside the text also comes before its pooled token, and is read",
        ),
        wrong_answer(
            [0, 1, 3], "forgets that attention is causal: a masked position after the pooled token is never read"
        ),
        wrong_answer([], "thinks the mask matters to the pooling only; the last stage's layers read it too"),
    ),
    debrief=(
        "ask a pair that answered [0, 2] for the counterexample they got: a row that starts with the pad id "
        "but whose mask says the token is real. The mask, not the id, says what is padding, and a mask of "
        "ones only changes a row where it hid a position the pooled token reads: one before it, since "
        "attention is causal. That is why a pipeline hands the mask to every stage"
    ),
)
def _judge_mask_of_ones(answer: object) -> str | None:
    how = (
        "find the token the last stage pools, then ask whether the true mask hides a position it reads "
        "(itself and those before it: attention is causal)"
    )
    return judge_picked_rows(
        answer,
        _MASK_ROWS,
        _pad_before_the_pooled_token,
        how,
        shown=_shown,
        said=("whose logits a mask of ones changes", "whose logits a mask of ones leaves as they are"),
    )
