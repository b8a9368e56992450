"""The padding cases as data, each with its two references kept apart.

Every case is one row of token ids (pad id 0) with its attention mask and two answers
never to be confused:

* ``true_last``: the last real token, read from the attention mask: what a classifier
  *should* pool. ``None`` for the all-pad row, which has no real token.
* ``forward_pools``: the position ``model.forward`` pools in transformers 4.51.3 (and
  5.x), the rightmost non-pad id: what a pipeline must *reproduce* to be exact. It
  differs from ``true_last`` on the trailing-eos and all-pad rows.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from pp_demo.errors import BadInput

__all__ = ["PAD", "PaddingCase", "CASES", "REVIEW_TABLE", "get_case", "as_batch", "row_text"]

PAD = 0
"""The pad id of every case (and of the tiny model configs)."""


def row_text(row: Iterable[int | torch.Tensor]) -> str:
    """A row of ids or mask values as ``[0,0,5,6]``: compact, for tables and messages."""
    return "[" + ",".join(str(int(t)) for t in row) + "]"


@dataclass(frozen=True)
class PaddingCase:
    name: str
    input_ids: tuple[int, ...]
    attention_mask: tuple[int, ...]
    true_last: int | None
    forward_pools: int
    about: str

    @property
    def length(self) -> int:
        return len(self.input_ids)

    def tensors(self, device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """``(input_ids, attention_mask)`` as ``(1, L)`` long tensors."""
        return as_batch([self], device)


# A table, one row per line (the formatter would put one value per line).
# fmt: off
CASES: dict[str, PaddingCase] = {
    case.name: case
    for case in [
        PaddingCase("left", (0, 0, 5, 6, 7, 8), (0, 0, 1, 1, 1, 1), 5, 5,
                    "left-padded: pads first, as for batched generation"),
        PaddingCase("right", (5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), 3, 3,
                    "right-padded: pads last, the usual training layout"),
        PaddingCase("left_pad_in_content", (0, 0, 5, 0, 7, 8), (0, 0, 1, 1, 1, 1), 5, 5,
                    "left-padded, with a real token equal to the pad id (pad == eos)"),
        PaddingCase("right_pad_in_content", (5, 0, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), 3, 3,
                    "right-padded, with a real token equal to the pad id (pad == eos)"),
        PaddingCase("unpadded", (5, 6, 7, 8, 9, 10), (1, 1, 1, 1, 1, 1), 5, 5,
                    "no padding at all"),
        PaddingCase("all_pad", (0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0), None, 0,
                    "no real token: nothing is right; model.forward pools position 0"),
        PaddingCase("trailing_eos", (5, 6, 7, 0), (1, 1, 1, 1), 3, 2,
                    "ends in a real eos equal to pad: only the mask knows it is real"),
    ]
}
# fmt: on

REVIEW_TABLE = ("left", "right", "left_pad_in_content", "right_pad_in_content")
"""The four rows of the pull request's review table, in its order."""


def get_case(name: str) -> PaddingCase:
    try:
        return CASES[name]
    except KeyError:
        raise BadInput(f"unknown padding case {name!r}; known cases: {', '.join(CASES)}") from None


def as_batch(
    cases: Iterable[str | PaddingCase], device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack cases of one length into ``(input_ids, attention_mask)`` long tensors."""
    resolved = [get_case(c) if isinstance(c, str) else c for c in cases]
    lengths = {c.length for c in resolved}
    if len(lengths) != 1:
        raise BadInput(f"cases of different lengths {sorted(lengths)} cannot share a batch")
    ids = torch.tensor([c.input_ids for c in resolved], dtype=torch.long, device=device)
    mask = torch.tensor([c.attention_mask for c in resolved], dtype=torch.long, device=device)
    return ids, mask
