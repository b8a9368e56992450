"""Pooling rules: which position of each row a sequence classifier reads its logits from.

A decoder classifier scores every position and keeps one per row, the "pooled token".
Each rule below is one way real code finds it. They all return a 1-D ``long`` tensor
with one position per row (per sequence of a packed batch, for ``known_lengths``), on the
device of their input. Positions are returned raw: a rule that yields ``-1`` returns ``-1``,
because that is what the code it models hands to tensor indexing (where ``-1`` means the
last position).

Rules are looked up by a short, stable name (``get_rule``). A rule declares which
inputs it needs (``input_ids`` and ``pad_token_id``, the ``attention_mask``, or a packed
batch's ``cu_seqlens``), so callers can run every rule through one function, ``pooled_positions``.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from pp_demo.errors import BadInput

__all__ = [
    "Rule",
    "RULES",
    "FIX",
    "get_rule",
    "pooled_positions",
    "count_minus_one",
    "first_pad_minus_one_wrapped",
    "first_pad_minus_one",
    "rightmost_non_pad",
    "rightmost_attended",
    "attended_flip",
    "attended_cumsum",
    "known_lengths",
    "CORE_RULES",
    "PADDED_RULES",
]


# ---------------------------------------------------------------- input checks
# A wrong index is silent (it still selects *some* token), so every rule refuses
# input it cannot answer for instead of returning a position.


def _check_integer_tensor(tensor: object, name: str, dims: int, shape_text: str, holds: str) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != dims:
        raise BadInput(f"{name} must be {dims}-D{shape_text}, got shape {tuple(tensor.shape)}")
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer {holds}, got dtype {tensor.dtype}")


def _check_ids(input_ids: torch.Tensor) -> None:
    _check_integer_tensor(input_ids, "input_ids", 2, " (batch, length)", "token ids")
    if input_ids.shape[1] == 0:
        raise BadInput("input_ids has an empty sequence (length 0): there is no token to pool")


def _check_mask(attention_mask: torch.Tensor, like: torch.Tensor | None = None) -> None:
    if not isinstance(attention_mask, torch.Tensor):
        raise TypeError(f"attention_mask must be a torch.Tensor, got {type(attention_mask).__name__}")
    if attention_mask.dim() != 2:
        raise BadInput(f"attention_mask must be 2-D (batch, length), got shape {tuple(attention_mask.shape)}")
    if like is not None and attention_mask.shape != like.shape:
        raise BadInput(
            f"attention_mask shape {tuple(attention_mask.shape)} differs from input_ids shape {tuple(like.shape)}"
        )
    if attention_mask.dtype.is_floating_point or attention_mask.dtype.is_complex:
        raise TypeError(f"attention_mask must be integer or bool, got dtype {attention_mask.dtype}")
    if attention_mask.shape[1] == 0:
        raise BadInput("attention_mask has an empty sequence (length 0): there is no token to pool")
    # checking values needs the data: skipped while torch.export traces the rule (ONNX export) on
    # symbolic tensors
    if not torch.compiler.is_compiling() and ((attention_mask != 0) & (attention_mask != 1)).any():
        raise BadInput("attention_mask must contain only 0 and 1")


def _no_pad_id(input_ids: torch.Tensor) -> torch.Tensor:
    """What transformers does when the config has no pad token: batch 1 pools the last
    position, a larger batch is an error (rows could differ in length, nothing tells how)."""
    if input_ids.shape[0] != 1:
        raise BadInput(
            f"pad_token_id is None and the batch has {input_ids.shape[0]} rows: without a pad id "
            "the last real token of each row cannot be found (set config.pad_token_id)"
        )
    return torch.full((1,), input_ids.shape[1] - 1, dtype=torch.long, device=input_ids.device)


# ---------------------------------------------------------------- the rules


def count_minus_one(input_ids: torch.Tensor, pad_token_id: int | None) -> torch.Tensor:
    """Number of non-pad tokens minus one: ``ne(ids, pad).sum(-1) - 1``.

    Used by ColossalAI 0.5.0's pipeline forwards for Llama, Qwen2 and OPT sequence
    classification (the bug of this workbook, ColossalAI issue 6457). It counts
    tokens, so it is a position only when all real tokens come first: right for
    right padding, wrong for left padding and for a pad id among the real tokens.
    """
    _check_ids(input_ids)
    if pad_token_id is None:
        return _no_pad_id(input_ids)
    return (input_ids != pad_token_id).sum(-1).long() - 1


def first_pad_minus_one(
    input_ids: torch.Tensor,
    pad_token_id: int | None,
) -> torch.Tensor:
    """Position before the first pad id, unwrapped: ``eq(ids, pad).argmax(-1) - 1``.

    Used by ColossalAI 0.5.0's Mistral pipeline forward. On a row with no pad, or with
    a pad first (left padding), argmax is 0 and the result is the raw ``-1``; tensor
    indexing wraps ``-1`` to the last position, which is why plain left or right
    padding still pools correctly. A pad id among the real tokens (pad == eos) stops
    it early.
    """
    _check_ids(input_ids)
    if pad_token_id is None:
        return _no_pad_id(input_ids)
    return (input_ids == pad_token_id).int().argmax(-1).long() - 1


def first_pad_minus_one_wrapped(
    input_ids: torch.Tensor,
    pad_token_id: int | None,
) -> torch.Tensor:
    """``first_pad_minus_one`` taken modulo the length (so ``-1`` becomes ``L - 1``).

    Used by ColossalAI 0.5.0's GPT-2, Bloom, Falcon and GPT-J pipeline forwards, and
    by transformers 4.48 and earlier; the modulo was kept instead of negative indexing
    for ONNX export. Same positions as the unwrapped rule after indexing.
    """
    return first_pad_minus_one(input_ids, pad_token_id) % input_ids.shape[-1]


def rightmost_non_pad(
    input_ids: torch.Tensor,
    pad_token_id: int | None,
) -> torch.Tensor:
    """Rightmost position whose id is not the pad id:
    ``(arange(L) * (ids != pad)).argmax(-1)``.

    The fix: transformers >= 4.49 (PR 35911), and the Qwen3 pipeline forward ColossalAI
    added after its 0.5.0 release (0.5.0 itself has no Qwen3 forward).
    Right for either padding side and for pad ids among the real tokens. Still wrong
    when a row *ends* in a real token equal to pad (an eos with pad == eos), and 0 on
    an all-pad row (argmax of all zeros).
    """
    _check_ids(input_ids)
    if pad_token_id is None:
        return _no_pad_id(input_ids)
    positions = torch.arange(input_ids.shape[-1], device=input_ids.device)
    return (positions * (input_ids != pad_token_id)).argmax(-1)


def rightmost_attended(attention_mask: torch.Tensor) -> torch.Tensor:
    """Rightmost position the attention mask marks as real: ``(arange(L) * mask).argmax(-1)``.

    Needs no pad id, so it stays right when a real eos equal to pad ends a row, where
    every pad-id rule (the fix included) pools the token before it. None of the
    pipeline forwards studied here does this. 0 on a row with no attended token.
    """
    _check_mask(attention_mask)
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device)
    return (positions * attention_mask.long()).argmax(-1)


def attended_flip(attention_mask: torch.Tensor) -> torch.Tensor:
    """Class (d) spelled from the right end: ``L - 1 - mask.flip(-1).argmax(-1)``.

    Reverse the mask, find the first attended entry, convert back to a forward position.
    Same answer as ``rightmost_attended`` whenever a row has an attended token; on a
    row with none, argmax of all zeros is 0 and the result is ``L - 1``, not 0.
    """
    _check_mask(attention_mask)
    length = attention_mask.shape[-1]
    return length - 1 - attention_mask.long().flip(-1).argmax(-1)


def attended_cumsum(attention_mask: torch.Tensor) -> torch.Tensor:
    """Class (d) spelled as a running count: ``mask.cumsum(-1).argmax(-1)``.

    The running count of attended tokens reaches its maximum at the last attended
    position, and ``argmax`` returns the first index of a tie, so the pads after it
    do not move the answer. 0 on a row with no attended token (all counts are 0).
    """
    _check_mask(attention_mask)
    return attention_mask.long().cumsum(-1).argmax(-1)


def _check_cu_seqlens(cu_seqlens: torch.Tensor) -> None:
    _check_integer_tensor(cu_seqlens, "cu_seqlens", 1, "", "offsets")
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


def known_lengths(cu_seqlens: torch.Tensor) -> torch.Tensor:
    """Class (e), no inference at all: ``cu_seqlens[1:] - 1``.

    A packed batch puts its sequences one after another in a single row and says where
    each one ends with cumulative lengths ``[0, n0, n0 + n1, ...]``. The last token of
    sequence i is one before the next offset: nothing is read from the tokens, so pad
    ids, eos ids and padding sides cannot mislead it. Positions index the flat row.
    Used where the batch is built by the code itself (NeMo-Aligner's reward model, the
    vLLM, SGLang and text-embeddings-inference poolers).
    """
    _check_cu_seqlens(cu_seqlens)
    return cu_seqlens[1:].long() - 1


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Rule:
    """A pooling rule under its short name, with the inputs it reads and where it is used."""

    name: str
    fn: Callable[..., torch.Tensor]
    needs: tuple[str, ...]
    used_by: str

    def __call__(self, **inputs: Any) -> torch.Tensor:
        return self.fn(**{key: inputs.get(key) for key in self.needs})


_IDS = ("input_ids", "pad_token_id")
_MASK = ("attention_mask",)

RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in [
        Rule("count", count_minus_one, _IDS, "ColossalAI 0.5.0 llama, qwen2, opt"),
        Rule(
            "first_pad_mod",
            first_pad_minus_one_wrapped,
            _IDS,
            "ColossalAI 0.5.0 gpt2, bloom, falcon, gptj; transformers <= 4.48",
        ),
        Rule("first_pad", first_pad_minus_one, _IDS, "ColossalAI 0.5.0 mistral"),
        Rule(
            "rightmost_non_pad",
            rightmost_non_pad,
            _IDS,
            "the fix: transformers >= 4.49, ColossalAI qwen3 (after 0.5.0)",
        ),
        Rule("rightmost_attended", rightmost_attended, _MASK, "attention mask; none of the pipeline forwards"),
        Rule("attended_flip", attended_flip, _MASK, "attention mask, flipped: the same class as rightmost_attended"),
        Rule(
            "attended_cumsum",
            attended_cumsum,
            _MASK,
            "attention mask, running count: the same class as rightmost_attended",
        ),
        Rule(
            "known_lengths",
            known_lengths,
            ("cu_seqlens",),
            "packed batches: NeMo-Aligner reward model; vLLM, SGLang, TEI poolers",
        ),
    ]
}

CORE_RULES = ("count", "first_pad_mod", "first_pad", "rightmost_non_pad", "rightmost_attended")
"""The review table's five core rules, ``pp_demo.pooling.padding_table``'s default: the three pipeline-forward
rules, the fix and the attention mask. Notebook 07 compares the other mask spellings and the packed-batch rule."""

PADDED_RULES = tuple(name for name, rule in RULES.items() if "cu_seqlens" not in rule.needs)
"""Every rule that reads a padded row (its ids with the pad id, or its attention mask): all
but ``known_lengths``, which reads a packed batch's ``cu_seqlens``. The command line offers
these, the explorer and the checker run them."""

FIX = "rightmost_non_pad"
"""The rule ``model.forward`` uses in transformers 4.51.3 and 5.x: the reference of exactness."""


def get_rule(name: "str | Rule") -> Rule:
    """The rule registered under ``name``; a ``ValueError`` lists the known names."""
    if isinstance(name, Rule):
        return name
    try:
        return RULES[name]
    except (KeyError, TypeError):
        raise BadInput(f"unknown pooling rule {name!r}; known rules: {', '.join(RULES)}") from None


def pooled_positions(
    rule: "str | Rule",
    *,
    input_ids: torch.Tensor | None = None,
    pad_token_id: int | None = None,
    attention_mask: torch.Tensor | None = None,
    cu_seqlens: torch.Tensor | None = None,
) -> torch.Tensor:
    """Run one rule by name on whatever inputs the caller has, checking what it needs.

    When both ``input_ids`` and ``attention_mask`` are given their shapes must agree,
    whichever rule runs, so a batch with a stale mask is caught early. Likewise, with
    ``cu_seqlens`` the ids must be the packed row it describes: one row of its total length.
    """
    found = get_rule(rule)
    if input_ids is not None and attention_mask is not None:
        _check_ids(input_ids)
        _check_mask(attention_mask, like=input_ids)
    if input_ids is not None and cu_seqlens is not None:
        _check_ids(input_ids)
        _check_cu_seqlens(cu_seqlens)
        if input_ids.shape != (1, int(cu_seqlens[-1])):
            raise BadInput(
                f"a packed batch is one row of {int(cu_seqlens[-1])} tokens (cu_seqlens ends "
                f"there), got input_ids of shape {tuple(input_ids.shape)}"
            )
    inputs = dict(input_ids=input_ids, pad_token_id=pad_token_id, attention_mask=attention_mask, cu_seqlens=cu_seqlens)
    missing = [key for key in found.needs if key != "pad_token_id" and inputs[key] is None]
    if missing:
        raise BadInput(f"rule {found.name!r} needs {', '.join(missing)}")
    return found(**inputs)
