"""Run a job's stages in one process: micro-batches through every stage, in order.

This is the pipeline without the processes: the same stage modules the ranks hold, so
any difference between the two runs is the engine's.

A run splits the model once: ``split_model`` copies the body's module tree per stage, which at
real size costs more than the stages' compute on a GPU. The stages of a model are kept (weakly:
they go with the model) and used again while nothing they were built from changed: the same
module, parameter and buffer objects (a ``.to()`` keeps the parameters but replaces the buffers)
and an equal config (the copies hold their own). Inference logits stay on the model's device
until a ``Result`` (which the ranks fill from the CPU) needs them there.
"""

import copy
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

from pp_demo.pipeline.jobs import (
    Batch,
    Inference,
    Job,
    Result,
    Step,
    Training,
    micro_batch_loss,
    micro_batches,
    parameter_copies,
    prepare,
)
from pp_demo.pipeline.stages import Stages, split_model
from pp_demo.pooling.rules import FIX

__all__ = [
    "Forward",
    "accumulate",
    "train_steps",
    "run_in_process",
    "pipeline_logits",
    "fixed_pipeline",
    "count_rule_pipeline",
    "stages_for",
]


Forward = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""``(input_ids, attention_mask) -> logits``: the stages in order, or ``model.forward``."""


def accumulate(forward: Forward, batch: Batch, n_micro: int, device: torch.device) -> tuple[torch.Tensor, float]:
    """Forward and backward of every micro-batch, each one's loss (``micro_batch_loss``)
    divided by their count, as a pipeline schedule accumulates gradients. Returns the
    batch's logits (CPU) and the mean loss."""
    ids, mask, labels = batch.as_tuple()
    if labels is None:
        raise ValueError("a training batch needs one label per row")
    ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
    logits, losses = [], []
    for rows in micro_batches(ids.shape[0], n_micro):
        out = forward(ids[rows], mask[rows])
        loss = micro_batch_loss(out, labels[rows])
        (loss / n_micro).backward()
        logits.append(out.detach().cpu())
        losses.append(loss.detach())
    return torch.cat(logits), float(torch.stack(losses).mean())


def train_steps(
    model: nn.Module, forward: Forward, batches: Iterable[Batch], n_micro: int, lr: float, keep_params_every: int = 0
) -> Training:
    """The one optimiser loop: one Adam step per batch, its gradient accumulated over the
    micro-batches (``accumulate``), ``forward`` computing with ``model``'s parameters. Every
    way to train in one process runs it: the stages here, ``model.forward`` in
    ``pp_demo.training.loop.train_unpipelined``."""
    device = next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    step_logits: list[torch.Tensor] = []
    params_at: dict[int, dict[str, torch.Tensor]] = {}
    for step, batch in enumerate(batches, 1):
        optimizer.zero_grad(set_to_none=True)
        batch_logits, loss = accumulate(forward, batch, n_micro, device)
        optimizer.step()
        losses.append(loss)
        step_logits.append(batch_logits)
        if keep_params_every and step % keep_params_every == 0:
            params_at[step] = parameter_copies(model, lambda p: p)
    return Training(losses, step_logits, parameter_copies(model, lambda p: p), device.type, params_at)


_Key = tuple[int | tuple[int, ...] | None, str]
_KEPT: "weakref.WeakKeyDictionary[nn.Module, tuple[tuple[int, ...], dict[str, Any], dict[_Key, Stages]]]"
_KEPT = weakref.WeakKeyDictionary()


def _built_from(model: nn.Module) -> tuple[int, ...]:
    """The identities of every module, parameter, buffer and forward hook: a replaced or added
    one shows, in one pass (the stages' copies of the body carry the hooks it had when copied)."""
    ids: list[int] = []
    for module in model.modules():
        ids.append(id(module))
        ids.extend(id(t) for t in module._parameters.values())
        ids.extend(id(t) for t in module._buffers.values())
        ids.extend(id(h) for h in (*module._forward_hooks.values(), *module._forward_pre_hooks.values()))
    return tuple(ids)


def stages_for(model: nn.Module, split_points: int | tuple[int, ...] | None, rule: str) -> Stages:
    """``split_model(model, split_points, rule)``, built once per model and kept while the
    model's modules, parameters, buffers and config are the ones the stages were built from."""
    built_from, config = _built_from(model), vars(getattr(model, "config", None) or object())
    kept = _KEPT.get(model)
    if kept is None or kept[0] != built_from or kept[1] != config:
        kept = (built_from, copy.deepcopy(config), {})
        _KEPT[model] = kept
    key = (split_points, rule)
    if key not in kept[2]:
        kept[2][key] = split_model(model, split_points, rule)
    return kept[2][key]


def _infer(model: nn.Module, job: Job) -> torch.Tensor:
    """An ``"infer"`` job's logits, on the model's device."""
    device = next(model.parameters()).device
    stages = stages_for(model, job.split_points, job.rule)
    for stage in stages:
        stage.train(False)  # each stage holds copies of the body: set its mode
    ids, mask = job.batch.input_ids.to(device), job.batch.attention_mask.to(device)
    with torch.no_grad():
        logits = [stages.logits(ids[rows], mask[rows]) for rows in micro_batches(ids.shape[0], job.n_micro)]
    return torch.cat(logits)


def run_in_process(job: Job) -> Result:
    """Run ``job`` (already checked) here. A ``"train"`` job trains a copy of its model, as
    the ranks do, so the caller's model is the same after either run."""
    if job.mode == "infer":
        return Inference(_infer(job.model, job).cpu(), next(job.model.parameters()).device.type)
    model = copy.deepcopy(job.model) if job.mode == "train" else job.model
    device = next(model.parameters()).device
    # a trained copy is new each run: nothing to keep
    stages = (
        split_model(model, job.split_points, job.rule)
        if job.mode == "train"
        else stages_for(model, job.split_points, job.rule)
    )
    for stage in stages:
        stage.train(True)
    forward = stages.logits
    if job.mode == "step":
        model.zero_grad(set_to_none=True)
        step, loss = accumulate(forward, job.batch, job.n_micro, device)
        grads = parameter_copies(model, lambda p: p.grad)
        model.zero_grad(set_to_none=True)
        return Step(step, loss, grads, device.type)
    return train_steps(model, forward, job.batches, job.n_micro, job.lr, job.keep_params_every)


def pipeline_logits(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    rule: str = FIX,
    split_points: int | tuple[int, ...] | None = None,
    n_micro: int = 1,
) -> torch.Tensor:
    """Logits of the pipeline run in this process, on the model's device: shorthand for
    ``run([Job.infer(...)])[0].logits``. A missing mask means every token is real."""
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    job = Job.infer(model, input_ids, attention_mask, rule=rule, split_points=split_points, n_micro=n_micro)
    return _infer(model, prepare(job))  # on the device: no round trip through the CPU


def fixed_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """pp_demo's pipeline with the fix, as a ``(model, ids, mask) -> logits`` callable for
    ``pp_demo.verify.checker.judge`` (``python -m pp_demo check pp_demo.pipeline.in_process:fixed_pipeline``)."""
    return pipeline_logits(model, input_ids, attention_mask, rule="rightmost_non_pad")


def count_rule_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The same with ColossalAI 0.5.0's count rule: what the checker reports as a failure."""
    return pipeline_logits(model, input_ids, attention_mask, rule="count")
