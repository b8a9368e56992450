"""Run the two stages in one process: micro-batches through both stages, in order.

This is the pipeline without the processes: the same stage modules the distributed
runner places on two ranks, so any difference between the two runs is the engine's.
"""

import torch

from .stages import split_model

__all__ = ["micro_batches", "run_local", "pipeline_logits"]


def micro_batches(batch_size, count):
    """Row slices of ``count`` equal micro-batches; a clear error when they can't be equal."""
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"the micro-batch count must be a positive int, got {count!r}")
    if batch_size % count:
        raise ValueError(f"a batch of {batch_size} rows cannot be split into {count} equal micro-batches")
    size = batch_size // count
    return [slice(i * size, (i + 1) * size) for i in range(count)]


@torch.no_grad()
def run_local(stages, input_ids, attention_mask=None, n_micro=1):
    """Logits of the last stage for the whole batch, micro-batch by micro-batch.

    A missing mask becomes all ones (every token real), as transformers assumes; the
    stages always get a tensor because ``None`` cannot travel between ranks.
    """
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    device = next(stages.first.parameters()).device
    input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
    logits = []
    for rows in micro_batches(input_ids.shape[0], n_micro):
        sent = stages.first(input_ids[rows], attention_mask[rows])
        logits.append(stages.last(*sent))
    return torch.cat(logits)


def pipeline_logits(model, input_ids, attention_mask=None, rule="rightmost_non_pad", split_at=None, n_micro=1):
    """Split ``model`` and run it in one process: the one-call form of the two above."""
    return run_local(split_model(model, split_at, rule), input_ids, attention_mask, n_micro)


def fixed_pipeline(model, input_ids, attention_mask):
    """pp_demo's two-stage pipeline with the fix, as a ``(model, ids, mask) -> logits``
    callable for ``pp_demo.checker`` (``python -m pp_demo check pp_demo.local:fixed_pipeline``)."""
    return pipeline_logits(model, input_ids, attention_mask, rule="rightmost_non_pad")


def count_rule_pipeline(model, input_ids, attention_mask):
    """The same with ColossalAI 0.5.0's count rule: what the checker reports as a failure."""
    return pipeline_logits(model, input_ids, attention_mask, rule="count")
