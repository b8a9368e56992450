"""The padding battery: batches that tell the pooling rules apart, for any model.

The named cases of ``pp_demo.core`` use pad id 0 and small token ids; a maintainer's
model has its own pad id and vocabulary. So the battery rebuilds each case for a given
``pad_token_id`` and ``vocab_size`` (real tokens drawn from the other ids, seeded), and adds
seeded random padding patterns (``random_row``) at several lengths and batch sizes. A
pipeline splits each batch into micro-batches, so ``micro_batches=M`` makes every batch a
multiple of M rows: a named case's rows are repeated, the random sizes must be multiples. A
model without a pad id still gets every padding pattern: the masked positions hold ``filler``
(its eos id, say), and only the mask says where the real tokens are.
"""

from collections.abc import Sequence

import torch

from pp_demo.core import CASES
from pp_demo.errors import BadInput
from pp_demo.ranks.jobs import Batch

__all__ = ["NAMED", "default_batch_sizes", "named_batches", "random_row", "random_batches", "battery", "named_length"]

NAMED = {
    "left": ["left"],
    "right": ["right"],
    "none": ["unpadded"],
    "pad_in_content": ["left_pad_in_content", "right_pad_in_content"],
    "pad_equals_eos": ["right_pad_in_content"],
    "trailing_real_eos": ["trailing_eos"],
    "all_pad": ["all_pad"],
}
RANDOM = "random"  # the name that selects every random batch in ``cases``


def default_batch_sizes(micro_batches: int = 1) -> tuple[int, ...]:
    """2, 4 and 7 rows, each rounded up to a multiple of ``micro_batches``."""
    return tuple(dict.fromkeys(-(-size // micro_batches) * micro_batches for size in (2, 4, 7)))


def named_length() -> int:
    """The longest named case: a model must take at least this many positions."""
    return max(len(CASES[c].input_ids) for names in NAMED.values() for c in names)


def _real_ids(shape: tuple[int, ...], pad_token_id: int, vocab_size: int, generator: torch.Generator) -> torch.Tensor:
    """Token ids other than the pad id."""
    if vocab_size < 2:
        raise BadInput(f"a vocabulary of {vocab_size} id(s) has no real token besides the pad id")
    ids = torch.randint(0, vocab_size - 1, shape, generator=generator)
    return ids + (ids >= pad_token_id).long()  # skip the pad id


def named_batches(
    pad_token_id: int, vocab_size: int, seed: int = 0, micro_batches: int = 1, names: Sequence[str] | None = None
) -> list[Batch]:
    """The named cases, pad id 0 made ``pad_token_id`` and real tokens redrawn (shape and
    pads kept)."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for name, case_names in NAMED.items():
        cases = [CASES[c] for c in case_names]
        template = torch.tensor([c.input_ids for c in cases])
        mask = torch.tensor([c.attention_mask for c in cases])
        # drawn for every case, chosen or not, so that a case's ids do not depend on the choice
        ids = torch.where(template == 0, pad_token_id, _real_ids(template.shape, pad_token_id, vocab_size, generator))
        if names is None or name in names:  # rows repeated to a multiple of micro_batches (a case keeps its meaning)
            index = torch.arange(-(-len(ids) // micro_batches) * micro_batches) % len(ids)
            batches.append(Batch(ids[index], mask[index], name=name))
    return batches


def random_row(
    length: int, pad_token_id: int, vocab_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One seeded row of ``length`` and its mask: left or right padded, maybe with a pad id
    among its real tokens or ending in a real token equal to pad."""
    real = int(torch.randint(1, length + 1, (1,), generator=generator))
    ids = _real_ids((real,), pad_token_id, vocab_size, generator)
    kind = int(torch.randint(0, 4, (1,), generator=generator))
    if kind == 1 and real > 2:  # a pad id among the real tokens (pad == eos)
        ids[int(torch.randint(0, real - 1, (1,), generator=generator))] = pad_token_id
    elif kind == 2:  # ends in a real eos equal to pad
        ids[-1] = pad_token_id
    pad = torch.full((length - real,), pad_token_id)
    ones, zeros = torch.ones(real, dtype=torch.long), torch.zeros(length - real, dtype=torch.long)
    if torch.randint(0, 2, (1,), generator=generator):  # left-padded
        return torch.cat([pad, ids]), torch.cat([zeros, ones])
    return torch.cat([ids, pad]), torch.cat([ones, zeros])


def random_batches(
    pad_token_id: int,
    vocab_size: int,
    seed: int = 0,
    lengths: Sequence[int] = (5, 9, 16),
    batch_sizes: Sequence[int] = (2, 4, 7),
) -> list[Batch]:
    """Seeded random padding patterns, one batch per (length, batch size)."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for length in lengths:
        for size in batch_sizes:
            rows = [random_row(length, pad_token_id, vocab_size, generator) for _ in range(size)]
            ids, mask = (torch.stack(parts) for parts in zip(*rows, strict=True))
            batches.append(Batch(ids, mask, name=f"random_L{length}_B{size}"))
    return batches


def battery(
    pad_token_id: int | None,
    vocab_size: int,
    seed: int = 0,
    lengths: Sequence[int] = (5, 9, 16),
    batch_sizes: Sequence[int] = (2, 4, 7),
    *,
    cases: Sequence[str] | None = None,
    micro_batches: int = 1,
    filler: int | None = None,
) -> list[Batch]:
    """Named cases first, then the random ones (``cases``: names of ``NAMED`` and/or
    ``"random"``; default all). ``filler`` stands in for a missing pad id."""
    if pad_token_id is None:
        if filler is None:
            raise BadInput(
                "the model has no pad_token_id: set config.pad_token_id (for example to the "
                "eos id), or give a filler id for the masked positions"
            )
        pad_token_id = filler
    unknown = sorted(set(cases or ()) - set(NAMED) - {RANDOM})
    if unknown:
        raise BadInput(f"unknown case(s) {', '.join(unknown)}; known: {', '.join([*NAMED, RANDOM])}")
    odd = [size for size in batch_sizes if size % micro_batches]
    if odd:
        raise BadInput(f"batch size(s) {odd} do not split into {micro_batches} micro-batches")
    batches = named_batches(pad_token_id, vocab_size, seed, micro_batches, cases)
    if cases is None or RANDOM in cases:
        batches += random_batches(pad_token_id, vocab_size, seed, lengths, batch_sizes)
    return batches
