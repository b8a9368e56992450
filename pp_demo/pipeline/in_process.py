"""Run a job's stages in one process: micro-batches through every stage, in order.

This is the pipeline without the processes: the same stage modules the ranks hold, so
any difference between the two runs is the engine's. Gradients follow the schedule's
convention: each micro-batch's mean loss divided by the micro-batch count.
"""

import copy
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from pp_demo.pipeline.jobs import (
    Batch,
    Inference,
    Job,
    Result,
    Step,
    Training,
    micro_batches,
    parameter_copies,
    prepare,
)
from pp_demo.pipeline.stages import Stages, split_model
from pp_demo.pooling.rules import FIX

__all__ = ["run_in_process", "pipeline_logits", "fixed_pipeline", "count_rule_pipeline"]


def _through(stages: Stages, ids: torch.Tensor, mask: torch.Tensor) -> Any:
    sent = stages.first(ids, mask)
    for stage in stages.modules[1:]:
        sent = stage(*sent)
    return sent


def _accumulate(stages: Stages, batch: Batch, n_micro: int, device: torch.device) -> tuple[torch.Tensor, float]:
    """Forward and backward of every micro-batch; the whole batch's logits and mean loss."""
    ids, mask, labels = (t.to(device) for t in batch.as_tuple() if t is not None)
    logits, losses = [], []
    for rows in micro_batches(ids.shape[0], n_micro):
        out = _through(stages, ids[rows], mask[rows])
        loss = F.cross_entropy(out, labels[rows])
        (loss / n_micro).backward()
        logits.append(out.detach().cpu())
        losses.append(loss.detach())
    return torch.cat(logits), float(torch.stack(losses).mean())


def run_in_process(job: Job) -> Result:
    """Run ``job`` (already checked) here. A ``"train"`` job trains a copy of its model, as
    the ranks do, so the caller's model is the same after either run."""
    model = copy.deepcopy(job.model) if job.mode == "train" else job.model
    device = next(model.parameters()).device
    stages = split_model(model, job.split_points, job.rule)
    for stage in stages:
        stage.train(job.mode != "infer")  # each stage holds copies of the body: set its mode
    if job.mode == "infer":
        ids, mask = job.batch.input_ids.to(device), job.batch.attention_mask.to(device)
        with torch.no_grad():
            logits = [_through(stages, ids[rows], mask[rows]) for rows in micro_batches(ids.shape[0], job.n_micro)]
        return Inference(torch.cat(logits).cpu(), device.type)
    if job.mode == "step":
        model.zero_grad(set_to_none=True)
        step, loss = _accumulate(stages, job.batch, job.n_micro, device)
        grads = parameter_copies(model, lambda p: p.grad)
        model.zero_grad(set_to_none=True)
        return Step(step, loss, grads, device.type)
    optimizer = torch.optim.Adam(model.parameters(), lr=job.lr)
    losses: list[float] = []
    step_logits: list[torch.Tensor] = []
    for batch in job.batches:
        optimizer.zero_grad(set_to_none=True)
        batch_logits, loss = _accumulate(stages, batch, job.n_micro, device)
        optimizer.step()
        losses.append(loss)
        step_logits.append(batch_logits)
    return Training(losses, step_logits, parameter_copies(model, lambda p: p), device.type)


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
    result = run_in_process(prepare(job))
    assert isinstance(result, Inference)
    return result.logits.to(next(model.parameters()).device)


def fixed_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """pp_demo's pipeline with the fix, as a ``(model, ids, mask) -> logits`` callable for
    ``pp_demo.verify.checker`` (``python -m pp_demo check pp_demo.pipeline.in_process:fixed_pipeline``)."""
    return pipeline_logits(model, input_ids, attention_mask, rule="rightmost_non_pad")


def count_rule_pipeline(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The same with ColossalAI 0.5.0's count rule: what the checker reports as a failure."""
    return pipeline_logits(model, input_ids, attention_mask, rule="count")
