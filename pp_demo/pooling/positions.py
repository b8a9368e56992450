"""``pooled_positions``: any pooling rule of the core run by name, its inputs checked at the door.

The core's rules are bare formulas (``pp_demo.core``): inside the pipeline the stage's door has
checked the batch already. A caller with tensors of their own (a notebook, the padding table, the
checker) comes through here, where input a rule cannot answer for is refused: a wrong index is
silent, it still selects *some* token.
"""

import torch

from pp_demo.core import RULES, Rule, get_rule, integer_tensor
from pp_demo.errors import BadInput

__all__ = ["PADDED_RULES", "pooled_positions"]

PADDED_RULES = tuple(name for name, rule in RULES.items() if "cu_seqlens" not in rule.needs)
"""Every rule that reads a padded row (all but ``known_lengths``): what the commands offer."""


def pooled_positions(
    rule: "str | Rule",
    *,
    input_ids: torch.Tensor | None = None,
    pad_token_id: int | None = None,
    attention_mask: torch.Tensor | None = None,
    cu_seqlens: torch.Tensor | None = None,
) -> torch.Tensor:
    """Run one rule by name on whatever inputs the caller has: the door of every rule.

    A wrong index is silent (it still selects *some* token), so input a rule cannot answer for
    is refused. With both ids and mask their shapes must agree whichever rule runs (a stale
    mask is caught early); with ``cu_seqlens`` the ids must be the one packed row it describes.
    """
    found = get_rule(rule)
    if input_ids is not None:
        _check_ids(input_ids)
    if attention_mask is not None:
        _check_mask(attention_mask, like=input_ids)
    if cu_seqlens is not None:
        _check_cu_seqlens(cu_seqlens)
        if input_ids is not None and input_ids.shape != (1, int(cu_seqlens[-1])):
            raise BadInput(
                f"a packed batch is one row of {int(cu_seqlens[-1])} tokens (cu_seqlens ends "
                f"there), got input_ids of shape {tuple(input_ids.shape)}"
            )
    inputs = dict(input_ids=input_ids, pad_token_id=pad_token_id, attention_mask=attention_mask, cu_seqlens=cu_seqlens)
    missing = [key for key in found.needs if key != "pad_token_id" and inputs[key] is None]
    if missing:
        raise BadInput(f"rule {found.name!r} needs {', '.join(missing)}")
    return found(**inputs)


def _check_ids(input_ids: torch.Tensor) -> None:
    integer_tensor(input_ids, "input_ids", 2)  # the core's check, so the same fault reads the same here
    if input_ids.shape[1] == 0:
        raise BadInput("input_ids has an empty sequence (length 0): there is no token to pool")


def _check_mask(attention_mask: torch.Tensor, like: torch.Tensor | None) -> None:
    if not isinstance(attention_mask, torch.Tensor):
        raise BadInput(f"attention_mask must be a torch.Tensor, got {type(attention_mask).__name__}")
    if attention_mask.dim() != 2:
        raise BadInput(f"attention_mask must be 2-D (batch, length), got shape {tuple(attention_mask.shape)}")
    if like is not None and attention_mask.shape != like.shape:
        raise BadInput(
            f"attention_mask shape {tuple(attention_mask.shape)} differs from input_ids shape {tuple(like.shape)}"
        )
    if attention_mask.dtype.is_floating_point or attention_mask.dtype.is_complex:
        raise BadInput(f"attention_mask must be integer or bool, got dtype {attention_mask.dtype}")
    if attention_mask.shape[1] == 0:
        raise BadInput("attention_mask has an empty sequence (length 0): there is no token to pool")
    if ((attention_mask != 0) & (attention_mask != 1)).any():
        raise BadInput("attention_mask must contain only 0 and 1")


def _check_cu_seqlens(cu_seqlens: torch.Tensor) -> None:
    integer_tensor(cu_seqlens, "cu_seqlens", 1)
    if cu_seqlens.shape[0] < 2:
        raise BadInput("cu_seqlens needs at least two entries (0 and the total): no sequence to pool")
    if int(cu_seqlens[0]) != 0:
        raise BadInput(f"cu_seqlens must start at 0, got {int(cu_seqlens[0])}")
    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    if (lengths < 0).any():
        raise BadInput(f"cu_seqlens must be non-decreasing, got {cu_seqlens.tolist()}")
    if (lengths == 0).any():
        empty = (lengths == 0).nonzero().flatten().tolist()
        raise BadInput(f"cu_seqlens has empty sequences (numbers {empty}): an empty sequence has no last token to pool")
