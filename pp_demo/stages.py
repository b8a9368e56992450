"""Split a ``*ForSequenceClassification`` model into two pipeline stages.

The stages reuse the model's own modules and its own body ``forward`` (copy the body
twice, prune each copy): no family's forward is rewritten, so positions, masks, rotary
or alibi terms are computed by transformers itself. Parameters are *shared* with the
model, not copied, so a training step through the stages trains the model itself.

    first stage:  embeddings + layers[:k]                -> hidden, input_ids, attention_mask
    last stage:   layers[k:] + final norm + pool + score -> logits

``input_ids`` and the mask travel with the hidden states because the last stage pools
from them, as in ColossalAI, whose schedule hands every stage the whole micro-batch.
"""

import copy
from dataclasses import dataclass

import torch
from torch import nn

from .families import family_of
from .rules import FIX, get_rule, pooled_positions

__all__ = ["FirstStage", "LastStage", "TwoStages", "split_model"]


class _Zero(nn.Module):
    """Stands in for learned position embeddings in the last stage: they were already
    added in the first stage, and the body's forward adds them again to its input."""

    def forward(self, *args, **kwargs):
        return torch.zeros(())


def _get(module, dotted):
    for name in dotted.split("."):
        module = getattr(module, name)
    return module


def _copy_sharing_parameters(body):
    # deepcopy the module tree but map every parameter and buffer to itself
    memo = {id(t): t for t in [*body.parameters(), *body.buffers()]}
    return copy.deepcopy(body, memo)


def _last_hidden(output):
    return output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]


class FirstStage(nn.Module):
    """Embeddings and the first ``k`` decoder layers; no final norm."""

    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, input_ids, attention_mask):
        hidden = _last_hidden(self.body(input_ids=input_ids, attention_mask=attention_mask, use_cache=False))
        return hidden, input_ids, attention_mask


class LastStage(nn.Module):
    """The remaining layers, the final norm, the pooling rule and the score head."""

    def __init__(self, body, score, rule, pad_token_id):
        super().__init__()
        self.body = body
        self.score = score
        self.rule = get_rule(rule).name
        self.pad_token_id = pad_token_id

    def forward(self, hidden, input_ids, attention_mask):
        hidden = _last_hidden(self.body(inputs_embeds=hidden, attention_mask=attention_mask, use_cache=False))
        positions = pooled_positions(self.rule, input_ids=input_ids, pad_token_id=self.pad_token_id,
                                     attention_mask=attention_mask)
        # pool first, then score: the head is a per-position linear map, so scoring one
        # position per row gives the same logits as scoring all and indexing afterwards
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), positions]
        return self.score(pooled)


@dataclass
class TwoStages:
    first: FirstStage
    last: LastStage
    split_at: int
    num_layers: int
    family: str

    def __iter__(self):
        return iter((self.first, self.last))

    def __getitem__(self, stage_index):
        return (self.first, self.last)[stage_index]


def split_model(model, split_at=None, rule=FIX):
    """Two stages of ``model``: layers ``[0, split_at)`` and ``[split_at, n)``.

    ``split_at`` defaults to half the layers; each stage keeps at least one layer.
    ``rule`` names the pooling rule of the last stage (``pp_demo.rules.RULES``).
    """
    family = family_of(model)
    rule = get_rule(rule).name
    body = _get(model, family.body)
    layers = getattr(body, family.layers)
    n = len(layers)
    if split_at is None:
        split_at = n // 2
    if not isinstance(split_at, int) or not 0 < split_at < n:
        raise ValueError(f"split_at must be an int in 1..{n - 1} for a model with {n} layers "
                         f"(each stage holds at least one), got {split_at!r}")

    first = _copy_sharing_parameters(body)
    setattr(first, family.layers, nn.ModuleList(list(layers)[:split_at]))
    for name in family.final:
        if getattr(first, name, None) is not None:
            setattr(first, name, nn.Identity())

    last = _copy_sharing_parameters(body)
    setattr(last, family.layers, nn.ModuleList(list(layers)[split_at:]))
    for name in family.zeroed:
        setattr(last, name, _Zero())
    for name in family.bypassed:
        if getattr(last, name, None) is not None:
            setattr(last, name, nn.Identity())

    return TwoStages(FirstStage(first), LastStage(last, model.score, rule, model.config.pad_token_id),
                     split_at, n, family.name)
