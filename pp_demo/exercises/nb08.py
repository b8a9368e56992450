"""Exercises of notebook 08 · ONNX (checked by ``pp_demo.exercises.check``).

Judged from definitions in plain Python: the raw position each rule computes, and the
legacy exporter's flattened lookup (row b, position p reads element ``b * L + p`` of the
batch flattened to ``B * L`` rows, a negative number counting back from its end)."""

import itertools
from collections.abc import Sequence

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import count_pools, first_pad_pools, forward_pools, is_int, one_counterexample, register, wrong_answer

_BATCH_08_1 = ((5, 6, 7, 8, 9), (0, 5, 6, 7, 8), (5, 6, 0, 0, 0), (0, 0, 0, 5, 6))


def _legacy_reads(batch: Sequence[Sequence[int]], b: int) -> tuple[int, int]:
    """The (row, position) the legacy export makes row ``b`` read with ``first_pad``."""
    length = len(batch[0])
    return divmod((b * length + first_pad_pools(batch[b], PAD, wrap=False)) % (len(batch) * length), length)


@register(
    "08.1",
    "Legacy exporter, first_pad without the modulo, batch [[5,6,7,8,9], [0,5,6,7,8], "
    "[5,6,0,0,0], [0,0,0,5,6]]: which (row, position) does each row read? A list of pairs.",
    solution=[(3, 4), (0, 4), (2, 1), (2, 4)],
    why="flat index b * L + first_pad; below 0 wraps to the batch end",
    wrong=(
        wrong_answer(
            [(0, 4), (1, 4), (2, 1), (3, 4)],
            "reads -1 within the row, as eager PyTorch (or the modulo) does; the legacy export flattens "
            "the batch, so row 0's -1 reaches the last row and row 3's reaches row 2",
        ),
        wrong_answer(
            [(3, 4), (3, 4), (0, 1), (3, 4)], "flattens the batch but forgets each row's offset b * L in the flat index"
        ),
    ),
)
def _judge_legacy_reads(answer: object) -> str | None:
    if not isinstance(answer, (list, tuple)) or len(answer) != len(_BATCH_08_1):
        return f"give a list of {len(_BATCH_08_1)} (row, position) pairs, one per row"
    for pair in answer:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(map(is_int, pair)):
            return f"{pair!r} is not a (row, position) pair of ints"
    misjudged = [
        f"row {b} {row_text(_BATCH_08_1[b])} is misjudged: take first_pad's position without the modulo, "
        "add the row's offset in the flattened batch, and count a negative index back from the flat end"
        for b, said in enumerate(answer)
        if tuple(said) != _legacy_reads(_BATCH_08_1, b)
    ]
    return one_counterexample(misjudged)


# The raw position each rule computes on one row, from its definition (no modulo, no indexing).
_RAW = {
    "count": lambda ids, mask: count_pools(ids, PAD, wrap=False),
    "first_pad": lambda ids, mask: first_pad_pools(ids, PAD, wrap=False),
    "rightmost_non_pad": lambda ids, mask: forward_pools(ids, PAD),
    "rightmost_attended": lambda ids, mask: max((i for i, m in enumerate(mask) if m), default=0),
}


def _negative_example(rule: str) -> tuple[tuple[int, ...], list[int]] | None:
    """A short row ``(ids, mask)`` (real where the id is not pad) on which ``rule`` is negative, or None."""
    for length in range(1, 5):
        for ids in itertools.product((PAD, 5), repeat=length):
            mask = [int(t != PAD) for t in ids]
            if _RAW[rule](ids, mask) < 0:
                return ids, mask
    return None


@register(
    "08.2",
    "Which of count, first_pad, rightmost_non_pad, rightmost_attended can return a negative "
    "position, the thing the modulo guards against under the legacy exporter? A list of names.",
    solution=["count", "first_pad"],
    why="count on an all-pad row gives -1 too, not only first_pad",
    wrong=(
        wrong_answer(["first_pad"], "forgets the all-pad row, where the count rule gives 0 - 1"),
        wrong_answer(
            ["count", "first_pad", "rightmost_non_pad"],
            "thinks the fix can go negative too; argmax returns a position and nothing is subtracted",
        ),
    ),
)
def _judge_negative_rules(answer: object) -> str | None:
    if isinstance(answer, str) or not hasattr(answer, "__iter__") or not all(isinstance(a, str) for a in answer):
        return f"give a list of rule names, from {', '.join(_RAW)}"
    answer = set(answer)
    unknown = sorted(answer - set(_RAW))
    if unknown:
        return f"{unknown[0]!r} is not one of {', '.join(_RAW)}"
    for rule in _RAW:
        example = _negative_example(rule)
        if rule in answer and example is None:
            return (
                f"{rule} never goes below 0, on [0] or on [5,0] or any row: argmax returns a position of the row, "
                "and nothing is subtracted from it"
            )
        if rule not in answer and example is not None:
            row = row_text(example[0])
            return f"you left out a rule that goes below 0 on a row: try each rule on {row} (pad id {PAD})"
    return None
