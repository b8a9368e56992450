"""Packed batches, and every registered rule judged on every case (notebook 07).

Padding is one way to batch sequences of different lengths; packing is the other: the
sequences sit end to end in a single row, with no pad at all, and cumulative lengths
``cu_seqlens = [0, n0, n0 + n1, ...]`` record where each ends. Inference servers batch
this way, so the last token of each sequence is known rather than inferred (class e).
A rule that reads ids or a mask sees one long row and answers one position for it.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import torch

from pp_demo.core import PAD, RULES, PaddingCase, Rule, get_rule
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import Verdict, judge, resolve_cases
from pp_demo.pooling.positions import pooled_positions

__all__ = ["PackedBatch", "PACKED", "pack", "class_grid", "run_on_cases"]


@dataclass(frozen=True)
class PackedBatch:
    """Sequences laid end to end in one row; ``true_last`` holds the last position of each."""

    name: str
    sequences: tuple[tuple[int, ...], ...]
    about: str

    @property
    def cu_seqlens(self) -> tuple[int, ...]:
        return tuple(accumulate((len(seq) for seq in self.sequences), initial=0))

    @property
    def true_last(self) -> tuple[int, ...]:
        return tuple(end - 1 for end in self.cu_seqlens[1:])

    @property
    def length(self) -> int:
        return self.cu_seqlens[-1]

    def tensors(self, device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(input_ids, attention_mask, cu_seqlens)``: one ``(1, total)`` row, a mask of
        ones (nothing in a packed row is padding), and the ``int32`` offsets that
        variable-length attention kernels take."""
        return pack(self.sequences, device)


def pack(
    sequences: Sequence[Sequence[int]], device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pack token sequences into ``(input_ids, attention_mask, cu_seqlens)``.

    Every sequence needs at least one token: an empty one has no last token to pool."""
    sequences = [list(seq) for seq in sequences]
    if not sequences or any(len(seq) == 0 for seq in sequences):
        raise BadInput("pack needs at least one sequence, and no empty sequence")
    flat = [token for seq in sequences for token in seq]
    ids = torch.tensor([flat], dtype=torch.long, device=device)
    cu_seqlens = torch.tensor(list(accumulate(map(len, sequences), initial=0)), dtype=torch.int32, device=device)
    return ids, torch.ones_like(ids), cu_seqlens


PACKED = PackedBatch(
    "packed",
    ((5, 6, 7), (8,), (9, 10, 11, 12)),
    "three sequences of lengths 3, 1 and 4 in one row of 8 tokens, no padding",
)


def _on_packed(rule: Rule, packed: PackedBatch, pad_token_id: int) -> Verdict:
    ids, mask, cu_seqlens = packed.tensors()
    got = pooled_positions(rule, input_ids=ids, pad_token_id=pad_token_id, attention_mask=mask, cu_seqlens=cu_seqlens)
    positions = tuple(int(p) for p in got)
    right = tuple(p % packed.length for p in positions) == packed.true_last
    return Verdict(rule.name, packed.name, positions, packed.true_last, right, packed.length)


def class_grid(
    rules: Sequence[str] | None = None,
    cases: Sequence[str | PaddingCase] | None = None,
    packed: PackedBatch | None = PACKED,
    pad_token_id: int = PAD,
) -> list[list[Verdict]]:
    """Every rule on every padding case (judged by the true last real token) and on ``packed``
    (``None`` leaves it out): one list of ``Verdict`` per rule, ``pp_demo.pooling.padding_table``'s
    grid transposed."""
    resolved = resolve_cases(cases)
    grid = []
    for rule in (get_rule(r) for r in (rules or RULES)):
        row = [judge(rule, case, "true_last", pad_token_id) for case in resolved]
        if packed is not None:
            row.append(_on_packed(rule, packed, pad_token_id))
        grid.append(row)
    return grid


def run_on_cases(
    fn: Callable[[torch.Tensor, torch.Tensor, int], Any],
    cases: Sequence[str | PaddingCase] | None = None,
    pad_token_id: int = PAD,
) -> dict[str, int]:
    """Run an expression ``fn(input_ids, attention_mask, pad_token_id)`` on each padding
    case as a batch of one: ``{case name: raw position}``. For classifying code you found."""
    return {
        case.name: int(torch.as_tensor(fn(*case.tensors(), pad_token_id)).reshape(-1)[0])
        for case in resolve_cases(cases)
    }
