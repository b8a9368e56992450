"""Exercises of notebook 09 · the pull request (checked by ``pp_demo.exercises.check``)."""

from typing import Any

import torch

from ..cases import PAD
from ..pr_claims import predicted
from ..rules import FIX, pooled_positions
from ..verify_pr_worker import batches
from .core import index_list, register, row_text

ROWS_09 = (
    [5, 6, 0, 0, 0, 0],
    [0, 5, 6, 7, 0, 0],
    [0, 0, 0, 5, 0, 6],
    [5, 0, 0, 6, 7, 8],
    [5, 6, 7, 8, 9, 0],
    [0, 0, 5, 6, 7, 0],
)
"""Six rows (pad id 0) for exercise 09.1."""


def _first_pad_misses() -> list[int]:
    ids = torch.tensor(ROWS_09)
    first_pad = pooled_positions("first_pad_mod", input_ids=ids, pad_token_id=PAD).tolist()
    fix = pooled_positions(FIX, input_ids=ids, pad_token_id=PAD).tolist()
    return [i for i, (p, q) in enumerate(zip(first_pad, fix, strict=True)) if p != q]


@register(
    "09.1",
    "Which rows of ROWS_09 (their indices) does GPT-2's unpatched pipeline forward pool "
    "at a different position than model.forward?",
)
def _judge_first_pad_rows(answer: Any) -> str | None:
    picked = index_list(answer, len(ROWS_09))
    if isinstance(picked, str):
        return picked
    truth = _first_pad_misses()
    for i in sorted(set(picked) ^ set(truth)):
        ids = torch.tensor([ROWS_09[i]])
        a = int(pooled_positions("first_pad_mod", input_ids=ids, pad_token_id=PAD)[0])
        b = int(pooled_positions(FIX, input_ids=ids, pad_token_id=PAD)[0])
        verdict = "the same position" if a == b else "different positions"
        return f"row {i} {row_text(ROWS_09[i])}: the first-pad form pools {a}, model.forward {b}: {verdict}"
    return None


_SIDES = ("left", "right")
_FAMILIES = ("llama", "qwen2", "opt")


def failing_pairs(variant: str) -> set[tuple[str, str]]:
    """The (family, side) pairs the rules say claim 2's test fails on, for a variant."""
    data = batches()
    out = set()
    for family in _FAMILIES:
        for side in _SIDES:
            ids = data[f"{side}-padded"][0]
            fix = pooled_positions(FIX, input_ids=ids, pad_token_id=PAD).tolist()
            if predicted(variant, family, ids) != fix:
                out.add((family, side))
    return out


@register(
    "09.2",
    "The change is applied to llama.py and opt.py but not qwen2.py. Which (family, side) "
    "pairs fail the test of claim 2? A set of tuples like ('llama', 'right').",
)
def _judge_minus_qwen2(answer: Any) -> str | None:
    try:
        pairs = {(str(f), str(s)) for f, s in answer}
    except (TypeError, ValueError):
        return "give a set of (family, side) tuples, e.g. {('llama', 'right')}"
    unknown = [p for p in pairs if p[0] not in _FAMILIES or p[1] not in _SIDES]
    if unknown:
        return f"{unknown[0]} is not a pair of a family in {_FAMILIES} and a side in {_SIDES}"
    truth = failing_pairs("change minus qwen2.py")
    if pairs - truth:
        family, side = sorted(pairs - truth)[0]
        return f"{family} with {side} padding passes: its pooling there is the rightmost non-pad position"
    if truth - pairs:
        family, side = sorted(truth - pairs)[0]
        return f"{family} with {side} padding fails: the old count is not a position there"
    return None
