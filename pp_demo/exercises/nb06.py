"""Exercises of notebook 06 · ColossalAI 0.5.0 (checked by ``pp_demo.exercises.check``)."""

import torch

from pp_demo.core import CASES, REVIEW_TABLE, as_batch
from pp_demo.pooling.padding_table import row_text

from .core import (
    PACKAGE_RULES,
    answered,
    first_pad_misses,
    index_list,
    judge_picked_rows,
    meta_problem,
    register,
    wrong_answer,
)

# Rows for 06.1 (pad id 0): only input_ids matter to the pooling rules.
_BLOOM_BATCH = ((0, 0, 5, 6, 7, 8), (5, 6, 0, 7, 0, 0), (0, 5, 6, 7, 0, 0), (0, 5, 0, 0, 7, 8), (5, 6, 7, 8, 9, 10))
_GPT2_ROW = ((5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0))  # exercise 06.2: position 1's view


@register(
    "06.1",
    "ColossalAI 0.5.0's Bloom forward pools with first_pad_mod. Which rows (indices) of the "
    "five-row batch does it pool at another position than model.forward?",
    solution=[1, 2],
    why=(
        "1: a pad id among the text stops it early; 2: padded on both sides, the first pad is in front, so "
        "the index wraps to the last position, a pad"
    ),
    wrong=(
        wrong_answer(
            [1], "sees the pad id among the text but not the row padded on both sides, where -1 wraps onto a pad"
        ),
        wrong_answer([0, 2, 3], "mixes up the first-pad rule with the count rule: pure left padding is fine here"),
    ),
)
def _judge_bloom_rows(answer: object) -> str | None:
    how = (
        "step back one from its first pad id (a step back from position 0 wraps to the row's end), and find its "
        "rightmost non-pad id"
    )
    return judge_picked_rows(answer, _BLOOM_BATCH, first_pad_misses, how)


@register(
    "06.2",
    "ColossalAI's GPT-2 forward under sdpa, row [5,6,7,8,0,0] with mask [1,1,1,1,0,0]: which "
    "positions does position 1 attend to in the first layer? A list of ints.",
    solution=[0, 1, 2, 3],
    why="every real token: the mask ColossalAI passes only hides padding",
    wrong=(
        wrong_answer([0, 1], "expects causal attention: ColossalAI's mask under sdpa holds only the padding part"),
        wrong_answer([0, 1, 2, 3, 4, 5], "forgets that the mask ColossalAI passes does hide the padding"),
    ),
)
def _judge_gpt2_view(answer: object) -> str | None:
    ids, mask = _GPT2_ROW
    answer = index_list(answer, len(ids), "positions")
    if isinstance(answer, str):
        return answer
    seen = {j for j, m in enumerate(mask) if m}  # a padding-only mask, and nothing causal
    if set(answer) == seen:
        return None
    row = f"{row_text(ids)} (mask {row_text(mask)})"
    if set(answer) == {0, 1}:
        return (
            f"on {row} [0, 1] is causal attention, what model.forward's GPT-2 does; ColossalAI's mask has no "
            "causal part, and sdpa adds none when it is handed a mask"
        )
    if set(answer) - seen:
        return f"on {row} your answer holds padding: the padding part is the part of the mask ColossalAI does pass"
    return f"on {row} your answer leaves out a real token that the mask ColossalAI passes leaves open"


def _first_wrong_entry(got: torch.Tensor, mask: torch.Tensor) -> tuple[int, int, int] | None:
    """``(b, i, j)`` of the first entry of ``got`` that breaks the definition, or None."""
    for b, mask_row in enumerate(mask.tolist()):
        for i in range(len(mask_row)):
            for j in range(len(mask_row)):
                # the definition: position i may attend to j when j comes no later than i and is real
                if bool(got[b, i, j]) != (j <= i and mask_row[j] == 1):
                    return b, i, j
    return None


def _causal_padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    length = attention_mask.shape[-1]
    causal = torch.ones(length, length, dtype=torch.bool, device=attention_mask.device).tril()
    return causal & attention_mask.bool()[:, None, :]


@register(
    "06.3",
    "Write causal_padding_mask(attention_mask) -> a bool tensor (batch, L, L), True where "
    "position i may attend to position j in model.forward's GPT-2.",
    # the package's rules, and transformers' own mask builders (4.x and 5.x): they are the answer
    refuse=(*PACKAGE_RULES, "transformers.modeling_attn_mask_utils", "transformers.masking_utils"),
    solution=_causal_padding_mask,
    why="position i sees j when j comes no later than i (causal) and j is a real token (padding)",
    wrong=(
        wrong_answer(
            lambda mask: torch.ones(mask.shape[-1], mask.shape[-1], dtype=torch.bool).tril().expand(*mask.shape, -1),
            "keeps causality and forgets the padding",
            shown="a lower triangle for every row",
        ),
        wrong_answer(
            lambda mask: mask.bool()[:, None, :].expand(-1, mask.shape[-1], mask.shape[-1]),
            "keeps the padding and forgets causality: ColossalAI's GPT-2 bug",
            shown="the attention mask repeated for every position",
        ),
    ),
)
def _judge_causal_padding_mask(make_mask: object) -> str | None:
    if not callable(make_mask):
        return "the answer should be a function attention_mask -> a bool tensor (batch, L, L)"
    batches = [(case.tensors()[1], f"{case.name} (mask {row_text(case.attention_mask)})") for case in CASES.values()]
    batches.append((as_batch(REVIEW_TABLE)[1], "the review table's four rows as one batch"))
    for mask, label in batches:
        got = answered(make_mask(mask))
        batch, length = mask.shape
        if not isinstance(got, torch.Tensor):
            return f"on {label} it returned {type(got).__name__}, not a tensor of shape ({batch}, {length}, {length})"
        if got.shape != (batch, length, length):
            return (
                f"on {label} it returned a tensor of shape {tuple(got.shape)}, not ({batch}, {length}, {length}): "
                "one row per query position i, one column per key position j"
            )
        if got.is_meta:
            return meta_problem(got, f"on {label}")
        if got.dtype != torch.bool:
            return f"on {label} it returned a tensor of {got.dtype}; return True/False (dtype torch.bool)"
        wrong = _first_wrong_entry(got, mask)
        if wrong:
            b, i, j = wrong
            where = f"on {label}" + (f", row {b}" if batch > 1 else "")
            if got[b, i, j]:
                why = "a later position" if j > i else "padding"
                return f"{where}: position {i} may attend to position {j} in your mask, but {j} is {why}"
            return (
                f"{where}: position {i} may not attend to position {j} in your mask, but {j} is an earlier real token"
            )
    return None
