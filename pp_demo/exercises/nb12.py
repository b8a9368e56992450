"""Exercises of notebook 12 · the reproduction taken apart (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import count_pools, forward_pools, int_list, register, wrong_answer

# exercise 12.1: padded on the right, a real eos (the pad id, mask 1) inside the text; the table of
# notebook 12 prints no row laid out like it
_EOS_INSIDE = ((5, 6, 0, 7, 8, 0), (1, 1, 1, 1, 1, 0))
# what a wrong try is shown instead: a row of another layout, whose answer (8, 7, 6, 7) shares no value with 12.1's
_WORKED_12 = ((5, 6, 0, 7, 8, 9, 10, 11, 0), (1, 1, 1, 1, 1, 1, 1, 1, 0))


def _four_counts(row: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[int, int, int, int]:
    """(real tokens, non-pad ids, the count rule's position, model.forward's position), by definition."""
    ids, mask = row
    return sum(mask), sum(t != PAD for t in ids), count_pools(ids, PAD), forward_pools(ids, PAD)


@register(
    "12.1",
    "On [5,6,0,7,8,0] with mask [1,1,1,1,1,0] (pad id 0; the 0 at position 2 is a real eos): how many "
    "tokens are real, how many ids are not the pad id, and which positions do the count rule and model.forward pool? "
    "Four ints.",
    solution=(5, 4, 3, 4),
    why=(
        "the mask marks five real tokens, the eos among them; four ids are not the pad id, so the count rule "
        "pools 4 - 1 = 3, the 7, one place before model.forward's rightmost non-pad id, the 8 at 4"
    ),
    wrong=(
        wrong_answer((5, 5, 4, 4), "counts the real eos as a non-pad id: it carries the pad id"),
        wrong_answer((4, 4, 3, 4), "reads the real tokens off the ids, not the mask"),
        wrong_answer((5, 4, 4, 4), "forgets the count rule's minus one"),
    ),
)
def _judge_four_counts(answer: object) -> str | None:
    said = int_list(answer)
    if said is None or len(said) != 4:
        return "give four ints: (real tokens, non-pad ids, the count rule's position, model.forward's position)"
    if tuple(said) == _four_counts(_EOS_INSIDE):
        return None
    ids, mask = _WORKED_12
    return (
        f"take your four steps on another row, {row_text(ids)} with mask {row_text(mask)}: its answer is "
        f"{_four_counts(_WORKED_12)}. Do you get that?"
    )
