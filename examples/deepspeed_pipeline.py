"""A sequence classifier on DeepSpeed's pipeline engine, written by hand as a team would, and its check.

DeepSpeed ships no classification forward for its ``PipelineModule``: its layers and the last
stage's pooling are yours. Here the first stage runs the model's decoder body, the second pools one
position per row and applies the score head, both sharing the model's weights. Two poolings: the
count of non-pad tokens minus one (ColossalAI 0.5.0's, wrong on left padding) and the rightmost
non-pad token (what ``model.forward`` pools). From the checkout's root, with ``make deepspeed``:

    python -m pp_demo check examples.deepspeed_pipeline:count_pipeline --engine deepspeed --family llama
    python -m pp_demo check examples.deepspeed_pipeline:fixed_pipeline --engine deepspeed --family llama

The first exits 1 (its left-padded rows differ, ``consistent with: count``), the second 0.
"""

import torch
from deepspeed.pipe import PipelineModule
from torch import nn


def count_pooling(input_ids, pad_token_id):
    """The non-pad tokens, minus one: a position only when every pad comes last."""
    return (input_ids != pad_token_id).sum(-1) - 1


def rightmost_non_pad(input_ids, pad_token_id):
    """The rightmost token that is not the pad id, on either side of the padding."""
    positions = torch.arange(input_ids.shape[-1], device=input_ids.device)
    return (positions * (input_ids != pad_token_id)).argmax(-1)


class Body(nn.Module):
    """Stage 1: embeddings, every decoder layer and the final norm; ids and mask ride along."""

    def __init__(self, model):
        super().__init__()
        self.body = model.base_model

    def forward(self, inputs):
        input_ids, attention_mask = inputs
        hidden = self.body(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state
        return hidden, input_ids, attention_mask


class Head(nn.Module):
    """Stage 2: one position per row, then the score head."""

    def __init__(self, model, pooling):
        super().__init__()
        self.score, self.pooling, self.pad_token_id = model.score, pooling, model.config.pad_token_id

    def forward(self, inputs):
        hidden, input_ids, _ = inputs
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        return self.score(hidden[rows, self.pooling(input_ids, self.pad_token_id)])


def count_pipeline(model):
    return PipelineModule([Body(model), Head(model, count_pooling)], num_stages=2, partition_method="uniform")


def fixed_pipeline(model):
    return PipelineModule([Body(model), Head(model, rightmost_non_pad)], num_stages=2, partition_method="uniform")
