"""Exercises of notebook 07 · the bug class (checked by ``pp_demo.exercises.check``)."""

from collections.abc import Callable

import torch

from pp_demo.core import CASES, PAD
from pp_demo.pooling.padding_table import row_text
from pp_demo.pooling.survey import CLASSES

from .core import count_pools, first_pad_pools, forward_pools, register, row_answer, true_last, wrong_answer

# Where each class lands on one padded row, from its definition in plain Python (pad id 0).
_LANDS_ON = {
    "a": lambda ids, mask: count_pools(ids, PAD),  # count of non-pad ids, minus one
    "b": lambda ids, mask: first_pad_pools(ids, PAD),  # one before the first pad id
    "c": lambda ids, mask: forward_pools(ids, PAD),  # the last non-pad id
    "d": lambda ids, mask: true_last(mask) or 0,  # the last attended position
}


# One parameter a line: notebook 07 prints this source, and a room reads it off a projector.
def mystery_07(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    pad_token_id: int,
) -> torch.Tensor:
    """An expression of the kind found in real pooling code, for exercise 07.1."""
    return (input_ids != pad_token_id).long().cumsum(-1).argmax(-1)


def _class_counterexample(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor], letter: str) -> str | None:
    """The first case with a real token where ``fn`` and class ``letter`` land apart, or None."""
    rule = CLASSES[letter].rule
    for case in (case for case in CASES.values() if case.true_last is not None):
        mine = int(fn(*case.tensors(), PAD).reshape(-1)[0]) % case.length
        theirs = _LANDS_ON[letter](case.input_ids, case.attention_mask)
        if mine != theirs:
            return (
                f"on {case.name} {row_text(case.input_ids)} class {letter} ({rule}) and the expression pool different "
                "positions: run both on it"
            )
    return None


@register(
    "07.1",
    "Run mystery_07 on the padding cases and name its class: one of 'a', 'b', 'c', 'd', 'e'.",
    solution="c",
    why="it agrees with rightmost_non_pad on every case, trailing eos included (it reads ids)",
    wrong=(
        wrong_answer("d", "judges by the result on ordinary rows; only the row ending in a real eos tells c from d"),
        wrong_answer("e", "class e reads packed lengths; the expression reads input_ids"),
    ),
)
def _judge_mystery_class(letter: object) -> str | None:
    if not isinstance(letter, str) or letter not in CLASSES:
        return f"{letter!r} is not a class; answer with one of {', '.join(map(repr, CLASSES))}"
    if letter == "e":
        return (
            f"class e reads the sequence lengths of a packed batch; mystery_07 reads input_ids: run it on left "
            f"{row_text(CASES['left'].input_ids)} and on the other cases"
        )
    return _class_counterexample(mystery_07, letter)


@register(
    "07.2",
    "The trailing-eos row shown above separates class c from class d. Padding and config also "
    "disagree in real set-ups: the tokenizer pads with its own pad token while the model config's "
    "pad_token_id, the id class c looks for, is another id. Find such a row (a pair (input_ids, "
    "attention_mask), config pad id 0) whose last real token is not the pad id, on which c and d "
    "pool different positions.",
    solution=([5, 6, 9, 9], [1, 1, 0, 0]),
    why=(
        "padded with the tokenizer's pad id 9, not the config's 0: c takes the padding for text and "
        "pools 3, d reads the mask and pools 1"
    ),
    wrong=(
        wrong_answer(
            "left",
            "picks a row where the two classes agree: they part where a real token carries the pad id, "
            "or where the padding does not",
        ),
        wrong_answer(([5, 6, 7, 8], [1, 1, 1, 1]), "a row without padding or pad ids: every class agrees there"),
    ),
)
def _judge_c_versus_d(answer: object) -> str | None:
    row = row_answer(answer)
    if isinstance(row, str):
        return row
    ids, mask, label = row
    last = true_last(mask)
    if last is None:
        return f"on {label} the mask marks no real token: there is no right answer to disagree about"
    if ids[last] == PAD:
        return (
            f"on {label} the last real token carries the pad id: that is the trailing-eos row the notebook "
            "showed. Find a row whose last real token is an ordinary id"
        )
    c, d = _LANDS_ON["c"](ids, mask), _LANDS_ON["d"](ids, mask)
    if c == d:
        return (
            f"on {label} both pool {c}: class c trusts the config's pad id ({PAD}) to mark padding. "
            "What if the padding carries another id, as a tokenizer with a pad token of its own does?"
        )
    return None
