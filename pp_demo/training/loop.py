"""What the bug does to training: a task whose label is decided by the last real token.

A row's label is the class of its last real token (``token % num_labels``), so a model can
only learn it by reading that token; batches mix left- and right-padded rows. The same tiny
model is trained from the same weights, with the same micro-batches, gradient scaling and
optimizer (Adam), through ``model.forward`` (``train_unpipelined``) or through the stages
with a pooling rule (``Job.train``), then served the usual way, through plain
``model.forward``.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from pp_demo.core import PAD, build_model
from pp_demo.ranks import jobs
from pp_demo.ranks.in_process import train_steps

__all__ = ["TrainingBatch", "make_batches", "train_unpipelined", "accuracy_by_side", "load_params", "fresh_model"]


@dataclass(frozen=True, eq=False)
class TrainingBatch(jobs.Batch):
    """A training batch: the runner's ``Batch`` and which rows are padded on the left."""

    left_padded: torch.Tensor | None = None  # bool per row: padding on the left (else right, or none)


def make_batches(
    n_batches: int, batch_size: int = 16, length: int = 8, vocab_size: int = 32, num_labels: int = 3, seed: int = 0
) -> list[TrainingBatch]:
    """Seeded batches: each row has 2..length real tokens (ids 1..vocab-1, never the pad
    id), padded on a random side; its label is its last real token modulo num_labels."""
    generator = torch.Generator().manual_seed(seed)
    batches: list[TrainingBatch] = []
    for _ in range(n_batches):
        ids = torch.full((batch_size, length), PAD)
        mask = torch.zeros(batch_size, length, dtype=torch.long)
        labels = torch.empty(batch_size, dtype=torch.long)
        left = torch.rand(batch_size, generator=generator) < 0.5
        for row in range(batch_size):
            real = int(torch.randint(2, length + 1, (1,), generator=generator))
            tokens = torch.randint(1, vocab_size, (real,), generator=generator)
            span = slice(length - real, length) if left[row] else slice(0, real)
            ids[row, span], mask[row, span] = tokens, 1
            labels[row] = tokens[-1] % num_labels
        batches.append(TrainingBatch(ids, mask, labels, left & (mask[:, 0] == 0)))
    return batches


def fresh_model(family: str = "llama", seed: int = 0) -> Any:  # a transformers *ForSequenceClassification
    """The tiny model every run starts from (same seed, same weights)."""
    return build_model(family, seed=seed)


def train_unpipelined(
    model: Any, batches: Iterable[jobs.Batch], n_micro: int = 1, lr: float = 1e-2
) -> tuple[list[float], list[torch.Tensor]]:
    """Adam through ``model.forward``, in place: the pipeline run's optimiser loop in one
    process without stages (``pp_demo.ranks.in_process.train_steps``). Returns each
    step's loss (mean over micro-batches) and logits."""

    def forward(ids: torch.Tensor, mask: torch.Tensor) -> Any:
        return model(input_ids=ids, attention_mask=mask).logits

    model.train()
    trained = train_steps(model, forward, batches, n_micro, lr)
    model.eval()
    return trained.losses, trained.step_logits


def load_params(model: Any, params: Mapping[str, torch.Tensor]) -> Any:
    """Put trained parameters (by name, as the ranks return them) into ``model``."""
    named = dict(model.named_parameters())
    if missing := set(named) - set(params):
        raise ValueError(f"no trained value for {len(missing)} parameter(s), e.g. {sorted(missing)[0]}")
    with torch.no_grad():
        for name, value in params.items():
            named[name].copy_(value)
    return model.eval()


def accuracy_by_side(logits: torch.Tensor, batch: TrainingBatch) -> dict[str, float]:
    """Fraction of right predictions among left-padded and among right-padded rows."""
    assert batch.labels is not None and batch.left_padded is not None  # make_batches sets both
    right = logits.argmax(-1).eq(batch.labels)
    return {
        side: float(right[rows].float().mean()) if rows.any() else float("nan")
        for side, rows in zip(("left", "right"), (batch.left_padded, ~batch.left_padded), strict=True)
    }
