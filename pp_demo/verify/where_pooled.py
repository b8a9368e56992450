"""Where was a row pooled? The one answer every verdict of the workbook uses.

A classifier's logits for a row are its score head applied at one position, so the position a
forward pooled can be read back from its logits alone: score every position with the model's
own head (within ``model.forward``'s own computation) and see whose logits equal the row's. No
framework has to say which index it used; the checker, ``verify-pr`` and the ColossalAI engine
run all read positions this way. Usually one position matches; masked positions of a
left-padded row can share logits, and then all of them are listed.
"""

from typing import Any

import torch

__all__ = ["per_position_logits", "pooled_positions_of", "pooled_mask", "pooled_mask_rounded"]


@torch.no_grad()
def per_position_logits(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """``(B, L, num_labels)``: the score head at every position, within ``model.forward``."""
    seen: dict[str, torch.Tensor] = {}
    hook = model.score.register_forward_hook(lambda module, args, out: seen.update(every=out))
    try:
        model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
    finally:
        hook.remove()
    return seen["every"]


def pooled_mask(per_position: torch.Tensor, logits: torch.Tensor, atol: float) -> torch.Tensor:
    """``(B, L)`` booleans: which positions' logits equal each row's ``logits`` within ``atol``."""
    return (per_position.float() - logits.float()[:, None, :]).abs().amax(-1) <= atol


def pooled_positions_of(per_position: torch.Tensor, logits: torch.Tensor, atol: float) -> list[list[int]]:
    """Per row, every position whose logits these are (within ``atol``); ``[]`` when none is."""
    return [row.nonzero().flatten().tolist() for row in pooled_mask(per_position, logits, atol)]


def pooled_mask_rounded(
    per_position: torch.Tensor, logits: torch.Tensor, dtype: torch.dtype, atol: float
) -> torch.Tensor:
    """As ``pooled_mask``, allowing each logit one rounding step of ``dtype`` (its relative eps):
    where a forward pooled when it returns, say, bf16 logits of an fp32 model."""
    step = torch.finfo(dtype).eps * per_position.float().abs() + atol
    return ((per_position.float() - logits.float()[:, None, :]).abs() <= step).all(-1)
