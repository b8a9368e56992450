"""Run a job in one process: micro-batches through the core's stages, in order, for inference,
one training step or training (``run(jobs, on="process")``).

This is the pipeline without the processes: the same stage modules the ranks hold, so any
difference between the two runs is the engine's. Inference is the core's loop
(``pp_demo.core.run_micro_batches``) on stages the core keeps per model; training adds the
backward of every micro-batch and one optimiser loop, shared with the unpipelined model.
"""

import copy
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import cast

import torch
from torch import nn

from pp_demo.core import Plan, micro_batches, pipeline_logits, run_micro_batches, stages_for
from pp_demo.ranks.jobs import (
    Batch,
    Inference,
    Job,
    Result,
    Step,
    Training,
    TrainingJob,
    micro_batch_loss,
    parameter_copies,
)

__all__ = ["Forward", "accumulate", "train_steps", "run_in_process", "fixed_pipeline", "count_rule_pipeline"]


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


def run_in_process(job: Job) -> Result:
    """Run ``job`` (already checked) here. A ``"train"`` job trains a copy of its model, as
    the ranks do, so the caller's model is the same after either run."""
    plan = cast(Plan, job.plan)  # prepared: the core's checked plan
    if job.mode == "infer":
        logits = run_micro_batches(stages_for(plan), job.batch.input_ids, job.batch.attention_mask, plan.rows)
        return Inference(logits, next(job.model.parameters()).device.type)
    model = copy.deepcopy(job.model) if job.mode == "train" else job.model
    device = next(model.parameters()).device
    stages = stages_for(replace(plan, model=model))  # a trained copy's go with it
    for stage in stages:
        stage.train(True)
    forward = stages.logits
    if job.mode == "step":
        model.zero_grad(set_to_none=True)
        step, loss = accumulate(forward, job.batch, job.n_micro, device)
        grads = parameter_copies(model, lambda p: p.grad)
        model.zero_grad(set_to_none=True)
        return Step(step, loss, grads, device.type)
    training = cast(TrainingJob, job)  # a "train" job is one, checked
    return train_steps(model, forward, job.batches, job.n_micro, training.lr, training.keep_params_every)


def fixed_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """pp_demo's pipeline with the fix, as a ``(model, ids, mask) -> logits`` callable for
    ``pp_demo.verify.checker.judge`` (``python -m pp_demo check pp_demo.ranks.in_process:fixed_pipeline``)."""
    return pipeline_logits(model, input_ids, attention_mask, rule="rightmost_non_pad")


def count_rule_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The same with ColossalAI 0.5.0's count rule: what the checker reports as a failure."""
    return pipeline_logits(model, input_ids, attention_mask, rule="count")
