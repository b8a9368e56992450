"""Exercises of notebook 06 · ColossalAI 0.5.0 (checked by ``pp_demo.exercises.check``)."""

import torch

from ..cases import CASES, PAD, REVIEW_TABLE, as_batch
from ..rules import first_pad_minus_one_wrapped, rightmost_non_pad
from .core import NotAttempted, _is_stub, index_list, register, row_text

# Rows for 06.1 (pad id 0): only input_ids matter to the pooling rules.
_BLOOM_BATCH = ((0, 0, 5, 6, 7, 8), (5, 6, 0, 7, 0, 0), (0, 5, 6, 7, 0, 0), (0, 5, 0, 0, 7, 8), (5, 6, 7, 8, 9, 10))
_GPT2_ROW = ((5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0))  # exercise 06.2: position 1's view




@register("06.1", "ColossalAI 0.5.0's Bloom forward pools with first_pad_mod. Which rows (indices) of the "
                  "five-row batch does it pool at another position than model.forward?")
def _judge_bloom_rows(answer):
    ids = torch.tensor(_BLOOM_BATCH)
    answer = index_list(answer, ids.shape[0], "rows")
    if isinstance(answer, str):
        return answer
    theirs = first_pad_minus_one_wrapped(ids, PAD).tolist()
    forward = rightmost_non_pad(ids, PAD).tolist()
    for i, (pooled, wanted) in enumerate(zip(theirs, forward)):
        if (i in answer) != (pooled != wanted):
            also = " too" if pooled == wanted else ""
            return f"row {i} {row_text(ids[i])}: first_pad_mod pools {pooled}, model.forward pools {wanted}{also}"
    return None


@register("06.2", "ColossalAI's GPT-2 forward under sdpa, row [5,6,7,8,0,0] with mask [1,1,1,1,0,0]: which "
                  "positions does position 1 attend to in the first layer? A list of ints.")
def _judge_gpt2_view(answer):
    ids, mask = _GPT2_ROW
    answer = index_list(answer, len(ids), "positions")
    if isinstance(answer, str):
        return answer
    seen = {j for j, m in enumerate(mask) if m}  # a padding-only mask, and nothing causal
    if set(answer) == seen:
        return None
    if set(answer) == {0, 1}:
        return ("[0, 1] is causal attention, what model.forward's GPT-2 does; ColossalAI's mask has no "
                "causal part, and sdpa adds none when it is handed a mask")
    padding = sorted(set(answer) - seen)
    if padding:
        return (f"{padding} {'is' if len(padding) == 1 else 'are'} padding: the padding part is the part of "
                "the mask ColossalAI does pass")
    return f"{sorted(answer)} leaves out {sorted(seen - set(answer))}, which the mask ColossalAI passes leaves open"


def _allowed(mask):
    """What model.forward's GPT-2 lets position i see: j <= i, and j not padding."""
    length = mask.shape[-1]
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    return causal & mask.bool()[:, None, :]


def _mask_batches():
    batches = [(case.tensors()[1], f"{case.name} (mask {row_text(case.attention_mask)})")
               for case in CASES.values()]
    batches.append((as_batch(REVIEW_TABLE)[1], "the review table's four rows as one batch"))
    return batches


@register("06.3", "Write causal_padding_mask(attention_mask) -> a bool tensor (batch, L, L), True where "
                  "position i may attend to position j in model.forward's GPT-2.")
def _judge_causal_padding_mask(make_mask):
    if not callable(make_mask):
        return "the answer should be a function attention_mask -> a bool tensor (batch, L, L)"
    for mask, label in _mask_batches():
        got = make_mask(mask)
        if _is_stub(got):
            raise NotAttempted
        batch, length = mask.shape
        if not isinstance(got, torch.Tensor) or got.shape != (batch, length, length):
            return f"on {label} it returned {got!r}, not a tensor of shape ({batch}, {length}, {length})"
        if got.dtype != torch.bool:
            return f"on {label} it returned a tensor of {got.dtype}; return True/False (dtype torch.bool)"
        wrong = (got != _allowed(mask)).nonzero()
        if len(wrong):
            b, i, j = wrong[0].tolist()
            where = f"on {label}" + (f", row {b}" if batch > 1 else "")
            if got[b, i, j]:
                why = "a later position" if j > i else "padding"
                return f"{where}: position {i} may attend to position {j} in your mask, but {j} is {why}"
            return f"{where}: position {i} may not attend to position {j} in your mask, but {j} is an earlier real token"
    return None
