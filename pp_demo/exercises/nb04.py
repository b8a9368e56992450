"""Exercises of notebook 04 · pad == eos (checked by ``pp_demo.exercises.check``)."""

import torch

from pp_demo.core import CASES, PAD
from pp_demo.pooling.padding_table import row_text

from .core import (
    PACKAGE_RULES,
    answered,
    count_pools,
    first_pad_pools,
    forward_pools,
    judge_picked_rows,
    outside_the_row,
    plain_int,
    positions_problem,
    register,
    true_last,
    wrong_answer,
)

# A batch built by hand, pad id 0 = eos id: some rows end in a real eos, some in padding,
# some carry an eos inside the text. The true last real token is read from the mask.
_EOS_BATCH = (
    ((5, 6, 7, 0), (1, 1, 1, 1)),
    ((0, 0, 5, 6), (0, 0, 1, 1)),
    ((5, 0, 6, 0), (1, 1, 1, 0)),
    ((5, 6, 0, 0), (1, 1, 1, 0)),
    ((0, 5, 0, 6), (0, 1, 1, 1)),
)
# a prompt <eos> response <eos> row, right-padded (exercise 04.3)
_PAIR_ROW = ((5, 6, 0, 7, 8, 0, 0, 0), (1, 1, 1, 1, 1, 1, 0, 0))


@register(
    "04.1",
    "In the five-row batch (pad id 0 = eos id), which rows (indices) does rightmost_non_pad "
    "pool somewhere other than the true last real token?",
    solution=[0, 3],
    why="wrong exactly where the last real token is an eos sharing the pad id",
    wrong=(
        wrong_answer([2, 4], "confuses a pad id inside the text (harmless here) with a row that ends in a real eos"),
        wrong_answer(
            [0], "sees the all-real row ending in eos but not the right-padded one whose last real token is an eos"
        ),
    ),
)
def _judge_rightmost_non_pad_rows(answer: object) -> str | None:
    return judge_picked_rows(
        answer,
        _EOS_BATCH,
        lambda pair: forward_pools(pair[0], PAD) != true_last(pair[1]),
        "find where rightmost_non_pad lands (it reads the ids) and the true last real token (the mask says which "
        "tokens are real)",
        shown=lambda pair: f"{row_text(pair[0])} with mask {row_text(pair[1])}",
    )


def _true_last_rule(input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device)
    return (positions * attention_mask.long()).argmax(-1)


@register(
    "04.2",
    "Write a rule (input_ids, attention_mask, pad_token_id) -> positions that pools the true "
    "last real token of every row that has one, a row ending in a real eos included.",
    refuse=PACKAGE_RULES,
    solution=_true_last_rule,
    why="only the mask knows a trailing eos (id == pad id) is real: rightmost attended position",
    wrong=(
        wrong_answer(
            lambda ids, mask, pad: (torch.arange(ids.shape[-1]) * (ids != pad)).argmax(-1),
            "still trusts the ids: a real eos equal to pad looks like padding",
            shown="the fix, `rightmost_non_pad`, written out",
        ),
        wrong_answer(
            lambda ids, mask, pad: mask.sum(-1) - 1,
            "the count rule on the mask: right on right padding, wrong as soon as padding comes first",
            shown="`attention_mask.sum(-1) - 1`",
        ),
    ),
)
def _judge_mask_rule(rule: object) -> str | None:
    if not callable(rule):
        return "the answer should be a function (input_ids, attention_mask, pad_token_id) -> positions"
    rows = [
        (case.tensors(), f"{case.name} {row_text(case.input_ids)} (mask {row_text(case.attention_mask)})")
        for case in CASES.values()
        if case.true_last is not None
    ]
    batch = torch.tensor([row for row, _ in _EOS_BATCH]), torch.tensor([mask for _, mask in _EOS_BATCH])
    rows.append((batch, "the batch of exercise 04.1"))
    for (ids, mask), label in rows:
        got = answered(rule(ids, mask, PAD))
        problem = positions_problem(got, ids.shape[0], label)
        if problem is not None:  # positions are integers: 0.4 past a token is no token
            return problem
        assert isinstance(got, torch.Tensor)  # positions_problem said otherwise
        for i in range(ids.shape[0]):
            said, want = int(got[i]), true_last(mask[i].tolist())
            where = label if ids.shape[0] == 1 else f"row {i} of {label}"
            outside = outside_the_row(said, ids.shape[1])  # counted from the left, as 01.1 asks: no wrap
            if outside is not None:
                return f"on {where} your rule returns {outside}; the true last real token is {want}"
            if said != want:
                return f"on {where} your rule pools {said}, the true last real token is {want}"
    return None


@register(
    "04.3",
    "A prompt <eos> response <eos> row, right-padded: [5,6,0,7,8,0,0,0] with mask "
    "[1,1,1,1,1,1,0,0]. Which position does first_pad_mod pool? Give an int.",
    solution=1,
    why="the first pad id is the eos closing the prompt (position 2): one before it",
    wrong=(
        wrong_answer(4, "answers with rightmost_non_pad, which skips the trailing eos ids"),
        wrong_answer(5, "answers with the true last real token; first_pad_mod stops at the first pad id"),
        wrong_answer(7, "expects the -1 wrap; it happens only when the row starts with a pad id or has none"),
    ),
)
def _judge_first_pad_prediction(answer: object) -> str | None:
    position = plain_int(answer, "a position as an int")
    if isinstance(position, str):
        return position
    ids, mask = _PAIR_ROW
    if position == first_pad_pools(ids, PAD):
        return None
    hints = {
        forward_pools(ids, PAD): "where rightmost_non_pad pools",
        true_last(mask): "the true last real token, the closing eos",
        count_pools(ids, PAD): "where the count rule pools",
        len(ids) - 1: "the last position, where first_pad_mod lands only when a row starts with a pad id or has none",
    }
    hint = f"; {position} is {hints[position]}" if position in hints else ""
    return f"on {row_text(ids)}: {position} is not where first_pad_mod pools{hint}. Find the first pad id of the row"
