"""The core's stages as the layers of a DeepSpeed ``PipelineModule``.

DeepSpeed's engine hands each layer one value, the previous layer's output, and sends it between
stages as a tensor or a tuple of tensors. The core's stages take ``(hidden, input_ids,
attention_mask)``; so each layer here is a thin wrapper that unpacks the tuple, calls the core's
stage (its forward untouched: transformers computes the mask and the positions) and passes the ids
and mask on beside the hidden states. Integer tensors travel without gradients, as the engine wants.

    first:   (ids, mask)          -> FirstStage   -> (hidden, ids, mask)
    middle:  (hidden, ids, mask)  -> MiddleStage  -> (hidden, ids, mask)
    last:    (hidden, ids, mask)  -> LastStage    -> logits (its rule pools)
"""

from typing import Any

import torch
from torch import nn

from pp_demo.core import Stages

__all__ = ["Entry", "Between", "Exit", "as_layers", "pipeline_module"]


class _Layer(nn.Module):
    def __init__(self, stage: nn.Module) -> None:
        super().__init__()
        self.stage = stage  # the core's stage, its parameters the model's own


class Entry(_Layer):
    """The first stage: the batch in, the hidden states out with the ids and mask beside them."""

    def forward(self, inputs: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        ids, mask = inputs
        return self.stage(ids, mask), ids, mask


class Between(_Layer):
    """A middle stage: hidden states in and out, the ids and mask passed on."""

    def forward(self, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        hidden, ids, mask = inputs
        return self.stage(hidden, ids, mask), ids, mask


class Exit(_Layer):
    """The last stage: its rule pools one position per row, the score head gives the logits."""

    def forward(self, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        hidden, ids, mask = inputs
        logits: torch.Tensor = self.stage(hidden, ids, mask)
        return logits


def as_layers(stages: Stages) -> list[nn.Module]:
    """One layer per stage, in pipeline order: DeepSpeed's ``uniform`` partition puts one on each rank."""
    middle = [Between(stage) for stage in stages.modules[1:-1]]
    return [Entry(stages.first), *middle, Exit(stages.last)]


def pipeline_module(stages: Stages, loss_fn: Any = None) -> nn.Module:
    """A ``deepspeed.pipe.PipelineModule`` of ``stages``, one stage per rank (call on every rank,
    after ``deepspeed.init_distributed``). ``dynamic_shape``: batches of several shapes run on one engine."""
    from deepspeed.pipe import PipelineModule

    layers = as_layers(stages)
    pipeline: nn.Module = PipelineModule(
        layers, num_stages=len(layers), loss_fn=loss_fn, partition_method="uniform", dynamic_shape=True
    )
    return pipeline
