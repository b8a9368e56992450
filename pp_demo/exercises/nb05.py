"""Exercises of notebook 05 · training (checked by ``pp_demo.exercises.check``)."""

from collections.abc import Sequence

import torch

from pp_demo.pooling.cases import PAD, row_text
from pp_demo.pooling.rules import count_minus_one

from .core import WrongAnswer, index_list, register, true_last

_LABELS_05 = 3  # labels of the training task: the last real token's id modulo 3
_ROW_05 = ((0, 0, 0, 17, 4, 22, 9, 14), (0, 0, 0, 1, 1, 1, 1, 1))  # exercise 05.1
_LENGTH_05 = 8  # row length of the training task


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@register(
    "05.1",
    "The row [0,0,0,17,4,22,9,14] (mask [0,0,0,1,1,1,1,1]) of the training task: give "
    "(its label, the class of the token the count rule pools), a pair of ints.",
    solution=(2, 1),
    why="last real token 14 -> 14 % 3 = 2; five real tokens: position 4, token 4 -> 1",
    wrong=(
        WrongAnswer((2, 2), None, "assumes the count rule pools the last real token on a left-padded row"),
        WrongAnswer((1, 2), None, "gives the pair in the wrong order, or takes the label from the pooled token"),
    ),
)
def _judge_label_and_pooled_class(answer: object) -> str | None:
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__") or len(answer := list(answer)) != 2:
        return "give a pair of ints: (the row's label, the class of the token the count rule pools)"
    label, pooled_class = answer
    if not (_is_int(label) and _is_int(pooled_class)):
        return "give a pair of ints: (the row's label, the class of the token the count rule pools)"
    ids, mask = _ROW_05
    last = true_last(mask)
    assert last is not None  # the exercise's row has real tokens
    want_label = ids[last] % _LABELS_05
    position = int(count_minus_one(torch.tensor([ids]), PAD)[0])
    want_pooled = ids[position] % _LABELS_05
    real = sum(mask)
    row = row_text(ids)
    if label != want_label:
        return (
            f"{label} is not the row's label: on {row} the last real token is {ids[last]} (position {last}), "
            f"and its class is {ids[last]} % 3 = {want_label}"
        )
    if pooled_class != want_pooled:
        last_class = f", the class of the last real token {ids[last]}" if pooled_class == want_label else ""
        return (
            f"on {row} the count rule pools position {position} ({real} real tokens - 1), token "
            f"{ids[position]}, class {ids[position]} % 3 = {want_pooled}; not {pooled_class}{last_class}"
        )
    return None


def _count_pools_a_pad(real: int) -> bool:
    """Whether the count rule pools a pad on a left-padded row of the task with ``real`` real tokens."""
    ids = torch.tensor([[PAD] * (_LENGTH_05 - real) + [1] * real])
    return int(ids[0, int(count_minus_one(ids, PAD)[0])]) == PAD


@register(
    "05.2",
    "A left-padded row of the training task has length 8 and r real tokens (r = 2..7). For "
    "which r does the count rule pool a pad? A list (or set) of ints.",
    solution=[2, 3, 4],
    why="real tokens start at 8 - r, the count rule pools r - 1: a pad while 2r <= 8",
    wrong=(
        WrongAnswer([2, 3], None, "an off-by-one at the boundary: r = 4 pools position 3, still a pad"),
        WrongAnswer(
            [2, 3, 4, 5, 6, 7],
            None,
            "thinks every left-padded row pools a pad; with many real tokens it pools a real, wrong one",
        ),
    ),
)
def _judge_pad_pooled_counts(answer: object) -> str | None:
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return "give the numbers of real tokens as a list of ints, e.g. [2, 7]"
    answer = list(answer)
    if not all(_is_int(r) for r in answer):
        return "give the numbers of real tokens as a list of ints, e.g. [2, 7]"
    for r in answer:
        if not 2 <= r <= _LENGTH_05 - 1:
            return f"a left-padded row of the task has 2 to {_LENGTH_05 - 1} real tokens, not {r}"
    for r in range(2, _LENGTH_05):
        pad = _count_pools_a_pad(r)
        if (r in answer) != pad:
            first_real = _LENGTH_05 - r
            what = "a pad" if pad else "a real token"
            return (
                f"with r={r} the real tokens fill positions {first_real}-{_LENGTH_05 - 1}; the count rule "
                f"pools position {r - 1}, {what}"
            )
    return None


def _visible_positions(ids: Sequence[int], mask: Sequence[int]) -> list[int]:
    """Positions the count rule's logits can depend on: the pooled position and the real
    tokens before it. Causal attention hides later positions; the mask hides pads as keys,
    so a real query never reads a pad (on every transformers version)."""
    pooled = int(count_minus_one(torch.tensor([ids]), PAD)[0])
    return [p for p in range(pooled + 1) if mask[p]]


@register(
    "05.3",
    "The row [0,0,0,17,4,22,9,14] (mask [0,0,0,1,1,1,1,1]) goes through the count-rule "
    "pipeline. Its logits can depend on the input (token) at which positions? A list of ints.",
    solution=[3, 4],
    why="the count rule pools position 4; it sees itself and the real token before it",
    wrong=(
        WrongAnswer([7], None, "expects the logits to come from the last real token: the count rule pools position 4"),
        WrongAnswer([4], None, "forgets that attention mixes every earlier real token into the pooled position"),
        WrongAnswer([0, 1, 2, 3, 4], None, "forgets that the mask keeps the pads out of attention as keys"),
    ),
)
def _judge_visible_positions(answer: object) -> str | None:
    answer = index_list(answer, _LENGTH_05, "positions")
    if isinstance(answer, str):
        return answer
    ids, mask = _ROW_05
    want = _visible_positions(ids, mask)
    pooled = want[-1]
    if set(answer) == set(want):
        return None
    later = [p for p in answer if p > pooled]
    pads = [p for p in answer if not mask[p]]
    missing = [p for p in want if p not in answer]
    if set(answer) == set(range(_LENGTH_05)):
        return (
            f"not every position: position {pooled} is the one pooled; position {pads[0]} is a pad, which "
            f"the mask hides from it, and position {later[-1]} (token {ids[later[-1]]}) comes after it"
        )
    if later:
        return (
            f"the count rule pools position {pooled}, and attention is causal: nothing after it reaches it, "
            f"so not position {later[0]} (token {ids[later[0]]})"
            + (", the last real token" if later[0] == _LENGTH_05 - 1 else "")
        )
    if pads:
        return (
            f"position {pads[0]} is a pad (mask 0) and the pooled position {pooled} is a real token: the mask "
            "hides the pads from it as keys, so nothing at a pad reaches it"
        )
    left_out = missing[0]
    what = "the pooled token itself" if left_out == pooled else "a real token before it"
    return (
        f"the pooled position {pooled} sees itself and every real token before it; your answer leaves out "
        f"position {left_out} (token {ids[left_out]}, {what})"
    )
