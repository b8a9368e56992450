"""Split a ``*ForSequenceClassification`` model into pipeline stages at given layers.

The stages reuse the model's own modules and body ``forward`` (the body copied once per stage,
each copy pruned): no family's forward is rewritten, so transformers itself computes positions,
masks, rotary or alibi terms. Parameters are *shared* with the model, not copied: a training
step through the stages trains the model itself.

    first stage:   (input_ids, attention_mask)         embeddings + layers[:p1]                -> hidden
    middle stage:  (hidden, input_ids, attention_mask) layers[p1:p2]                           -> hidden
    last stage:    (hidden, input_ids, attention_mask) layers[pk:] + final norm + pool + score -> logits

Only the hidden states travel from stage to stage. Every stage gets the micro-batch's
``input_ids`` and mask from the schedule itself, as ColossalAI's schedule hands every stage the
whole micro-batch: the body needs the mask, and the last stage pools from both. Integer
tensors never cross between ranks, so no engine is asked for their gradient (torch 2.11 and
2.12 demand one for every tensor a stage receives).
"""

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from operator import attrgetter
from typing import Any, cast

import torch
from torch import nn

from pp_demo.errors import BadInput
from pp_demo.pipeline.families import Family, family_of
from pp_demo.pooling.rules import FIX, Rule, get_rule, pooled_positions

__all__ = [
    "FirstStage",
    "MiddleStage",
    "LastStage",
    "Stages",
    "split_model",
    "check_split_points",
    "even_split_points",
    "count_layers",
]


class _Zero(nn.Module):
    """Stands in for learned position embeddings after the first stage: they were already
    added there, and the body's forward adds them again to its input."""

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(())


def _last_hidden(output: Any) -> torch.Tensor:
    return cast(torch.Tensor, output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0])


class FirstStage(nn.Module):
    """Embeddings and the first decoder layers; no final norm."""

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        output = self.body(
            input_ids=input_ids,
            attention_mask=attention_mask,
            use_cache=False,
        )
        return _last_hidden(output)


class MiddleStage(nn.Module):
    """Decoder layers between two split points."""

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body

    def forward(
        self,
        hidden: torch.Tensor,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        output = self.body(
            inputs_embeds=hidden,
            attention_mask=attention_mask,
            use_cache=False,
        )
        return _last_hidden(output)


class LastStage(nn.Module):
    """The remaining layers, the final norm, the pooling rule and the score head."""

    def __init__(self, body: nn.Module, score: nn.Module, rule: str | Rule, pad_token_id: int | None) -> None:
        super().__init__()
        self.body = body
        self.score = score
        self.rule = get_rule(rule).name
        self.pad_token_id = pad_token_id

    def forward(
        self,
        hidden: torch.Tensor,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        output = self.body(
            inputs_embeds=hidden,
            attention_mask=attention_mask,
            use_cache=False,
        )
        hidden = _last_hidden(output)
        positions = pooled_positions(
            self.rule,
            input_ids=input_ids,
            pad_token_id=self.pad_token_id,
            attention_mask=attention_mask,
        )
        # pool first, then score: the head is a per-position linear map, so scoring one
        # position per row gives the same logits as scoring all and indexing afterwards
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), positions]
        logits: torch.Tensor = self.score(pooled)
        return logits


@dataclass(frozen=True)
class Stages:
    """The stages in pipeline order, with where the model was cut."""

    modules: tuple[nn.Module, ...]
    split_points: tuple[int, ...]
    num_layers: int
    family: str

    @property
    def first(self) -> FirstStage:
        return cast(FirstStage, self.modules[0])

    @property
    def last(self) -> LastStage:
        return cast(LastStage, self.modules[-1])

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[nn.Module]:
        return iter(self.modules)

    def __getitem__(self, stage_index: int) -> nn.Module:
        return self.modules[stage_index]

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Every stage in order, in this process: what the ranks compute together. Each
        stage gets the ids and the mask, as the schedule hands them on the ranks."""
        hidden = self.first(input_ids, attention_mask)
        for stage in self.modules[1:]:
            hidden = stage(hidden, input_ids, attention_mask)
        return cast(torch.Tensor, hidden)  # the last stage's logits


def count_layers(model: nn.Module) -> int:
    """The number of decoder layers of a supported model (an unsupported one is refused)."""
    family = family_of(model)
    return len(getattr(attrgetter(family.body)(model), family.layers))


def check_split_points(split_points: int | tuple[int, ...] | list[int] | None, num_layers: int) -> tuple[int, ...]:
    """The split points as a tuple: ``None`` is half the layers, an int one point (two
    stages); each stage must hold at least one layer."""
    _check_splittable(num_layers)
    if split_points is None:
        return (num_layers // 2,)
    points = (split_points,) if isinstance(split_points, int) and not isinstance(split_points, bool) else split_points
    valid = (
        isinstance(points, (tuple, list))
        and len(points) > 0
        and all(isinstance(p, int) and not isinstance(p, bool) and 0 < p < num_layers for p in points)
        and all(a < b for a, b in pairwise(points))
    )
    if not valid:
        raise BadInput(
            f"split points must be strictly increasing ints in 1..{num_layers - 1} for a model with "
            f"{num_layers} layers (each stage holds at least one layer), got {split_points!r}"
        )
    return tuple(points)  # type: ignore[arg-type]  # checked above: a tuple or list of ints


def _check_splittable(num_layers: int) -> None:
    if num_layers < 2:
        raise BadInput(
            f"a model with {num_layers} layer(s) cannot be split into stages: each stage holds at least one "
            "layer, so a pipeline needs a model of 2 layers or more (num_hidden_layers=2)"
        )


def even_split_points(num_layers: int, n_stages: int) -> tuple[int, ...]:
    """Points that cut ``num_layers`` layers into ``n_stages`` stages as evenly as possible."""
    _check_splittable(num_layers)
    if not isinstance(n_stages, int) or not 2 <= n_stages <= num_layers:
        raise BadInput(f"a model with {num_layers} layers splits into 2..{num_layers} stages, got {n_stages!r}")
    return tuple(round(i * num_layers / n_stages) for i in range(1, n_stages))


def _prune(body: nn.Module, family: Family, layers: list[nn.Module], first: bool, last: bool) -> nn.Module:
    """A copy of the body holding ``layers``; what runs before the first layer stays only in
    the first stage, what runs after the last layer only in the last stage."""
    # deepcopy the module tree but map every parameter and buffer to itself
    copy_ = copy.deepcopy(body, {id(t): t for t in [*body.parameters(), *body.buffers()]})
    setattr(copy_, family.layers, nn.ModuleList(layers))
    for name in (() if last else family.final) + (() if first else family.bypassed):
        if getattr(copy_, name, None) is not None:
            setattr(copy_, name, nn.Identity())
    for name in () if first else family.zeroed:
        setattr(copy_, name, _Zero())
    return copy_


def split_model(
    model: nn.Module, split_points: int | tuple[int, ...] | list[int] | None = None, rule: str = FIX
) -> Stages:
    """``len(split_points) + 1`` stages of ``model``, stage i holding layers
    ``[points[i-1], points[i])`` (default: half the layers, two stages); ``rule`` names the
    last stage's (``pp_demo.pooling.rules.RULES``)."""
    family = family_of(model)
    rule = get_rule(rule).name
    body = attrgetter(family.body)(model)
    layers = list(getattr(body, family.layers))
    points = check_split_points(split_points, len(layers))
    bounds = [0, *points, len(layers)]
    modules: list[nn.Module] = []
    score = cast(nn.Module, model.score)  # every *ForSequenceClassification head is `score`
    pad_token_id = cast("int | None", getattr(model.config, "pad_token_id", None))
    for i, (start, stop) in enumerate(pairwise(bounds)):
        first, last = i == 0, i == len(points)
        pruned = _prune(body, family, layers[start:stop], first, last)
        if first:
            modules.append(FirstStage(pruned))
        elif last:
            modules.append(LastStage(pruned, score, rule, pad_token_id))
        else:
            modules.append(MiddleStage(pruned))
    return Stages(tuple(modules), points, len(layers), family.name)
