"""What the pooling bug does to training, over many seeds, on the running transformers version.

One seed tells a story; ten tell which part of it holds. Every run trains the tiny Llama of
``pp_demo.training.loop`` through two stages, by the runner in one process (the two-rank
pipeline computes the same, step for step: ``tests/training/test_training.py``), then serves it
through ``model.forward`` on held-out rows, left- and right-padded apart.

The runs per seed (``RUNS``): besides the count rule and the fix, the count rule with the rows
it pools at a pad left out of the loss (testing the explanation of notebook 05), and a pad ==
eos variant of the task, where the first-pad rule's bug shows. ``pad_sight``: what a pad
position sees.
"""

import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
import transformers

from pp_demo.core import FIX, PAD, pipeline_logits, split_model
from pp_demo.pooling.positions import pooled_positions
from pp_demo.ranks import runner
from pp_demo.ranks.jobs import IGNORED, Job, Training
from pp_demo.training.loop import TrainingBatch, accuracy_by_side, fresh_model, load_params, make_batches

__all__ = [
    "StudySettings",
    "RUNS",
    "with_eos",
    "train_through_stages",
    "pad_sight",
    "run_study",
    "results_path",
    "outcome",
]

TARGET = 0.9  # the accuracy a run must reach to count as having learned the task


@dataclass(frozen=True)
class StudySettings:
    seeds: tuple[int, ...] = tuple(range(10))
    steps: int = 80
    batch_size: int = 32
    n_micro: int = 2
    lr: float = 1e-2
    split_at: int | tuple[int, ...] = 2  # where the stages start: any stage count
    held_out_rows: int = 512
    held_out_seed_offset: int = 1000  # held-out rows of seed s: make_batches seed s + offset
    eval_every: int = 5


@dataclass(frozen=True)
class Run:
    """One run of the study (a value of ``RUNS``): the task, the last stage's rule, and the loss."""

    task: str  # "plain" (make_batches) or "pad == eos" (with_eos)
    rule: str  # pooling rule of the last stage
    loss_on_pad_pooled: bool = True  # False: rows the rule pools at a pad are out of the loss


RUNS = {
    "count": Run("plain", "count"),
    "fix": Run("plain", FIX),
    "count, pad-pooled rows out of the loss": Run("plain", "count", loss_on_pad_pooled=False),
    "first_pad, pad == eos": Run("pad == eos", "first_pad"),
    "fix, pad == eos": Run("pad == eos", FIX),
}


def with_eos(batch: TrainingBatch, seed: int) -> TrainingBatch:
    """The pad == eos variant: in every row with 3 or more real tokens, one real token other
    than the first and the last becomes an eos, whose id is the pad id (the mask keeps it
    real). The last real token, hence the label, is unchanged."""
    generator = torch.Generator().manual_seed(seed)
    ids = batch.input_ids.clone()
    for row in range(ids.shape[0]):
        real = batch.attention_mask[row].nonzero().flatten()
        if len(real) >= 3:
            ids[row, real[1 + int(torch.randint(len(real) - 2, (1,), generator=generator))]] = PAD
    return replace(batch, input_ids=ids)


@torch.no_grad()
def _served_accuracy(model: Any, rows: TrainingBatch) -> dict[str, float]:
    model.eval()
    return accuracy_by_side(model(input_ids=rows.input_ids, attention_mask=rows.attention_mask).logits, rows)


def _pad_pooled_rows_ignored(batch: TrainingBatch, rule: str) -> TrainingBatch:
    """``batch`` with the label of every row that ``rule`` pools at a pad (mask 0) set to
    ``IGNORED``: those rows add 0 to the loss (the positions depend on the ids only)."""
    assert batch.labels is not None  # a training batch
    pooled = pooled_positions(rule, input_ids=batch.input_ids, pad_token_id=PAD)
    at_pad = batch.attention_mask[torch.arange(len(pooled)), pooled] == 0
    return replace(batch, labels=batch.labels.masked_fill(at_pad, IGNORED))


def train_through_stages(
    model: Any,
    batches: Iterable[TrainingBatch],
    run: Run,
    settings: StudySettings,
    held_out: TrainingBatch | None = None,
) -> tuple[list[float], list[torch.Tensor], list[list[float]]]:
    """Adam through the stages of ``model`` cut at ``settings.split_at``, by the runner in this
    process, micro-batch by micro-batch as ``train_unpipelined`` does; ``model`` ends with the
    trained weights. Returns the loss per step, each step's logits and, every ``eval_every``
    steps, ``model.forward``'s held-out accuracy."""
    if not run.loss_on_pad_pooled:
        batches = [_pad_pooled_rows_ignored(batch, run.rule) for batch in batches]
    job = Job.train(
        model,
        batches,
        lr=settings.lr,
        rule=run.rule,
        split_points=settings.split_at,
        n_micro=settings.n_micro,
        keep_params_every=settings.eval_every if held_out is not None else 0,
    )
    results = runner.run([job], on="process")  # None only on torchrun's other ranks: not here
    trained = results[0] if results else None
    assert isinstance(trained, Training)  # a training job's result
    curve: list[list[float]] = []
    if held_out is not None:  # parameters were kept every eval_every steps: serve each
        for step, params in trained.params_at.items():
            accuracy = _served_accuracy(load_params(model, params), held_out)
            curve.append([step, round(accuracy["left"], 4), round(accuracy["right"], 4)])
    load_params(model, trained.params)
    return trained.losses, trained.step_logits, curve


def _one_run(run: Run, seed: int, settings: StudySettings) -> dict[str, Any]:
    batches = make_batches(settings.steps, batch_size=settings.batch_size, seed=seed)
    held_out = make_batches(1, batch_size=settings.held_out_rows, seed=seed + settings.held_out_seed_offset)[0]
    if run.task == "pad == eos":
        batches = [with_eos(b, seed * 1000 + i) for i, b in enumerate(batches)]
        held_out = with_eos(held_out, seed + settings.held_out_seed_offset)
    model = fresh_model(seed=seed)
    _, _, curve = train_through_stages(model, batches, run, settings, held_out)
    final = _served_accuracy(model, held_out)
    return {
        "seed": seed,
        "held_out_accuracy": {side: round(value, 4) for side, value in final.items()},
        "steps_to_target": {
            side: next((row[0] for row in curve if row[column] >= TARGET), None)
            for column, side in ((1, "left"), (2, "right"))
        },
        "curve": curve,
    }


def pad_sight(seed: int = 0, split_at: int | tuple[int, ...] = 2) -> dict[str, float]:
    """Does what a left pad position computes change when the row's last real token changes?

    Max |change| at the pad positions of one left-padded row (3 real tokens: the count rule
    pools a pad), per value returned; zero: the pads see none of the row. Also the largest
    |value| of the body's hidden state at the pads (zero: nothing to train there)."""
    model = fresh_model(seed=seed)
    rows = (torch.tensor([[PAD] * 5 + [7, 11, 13]]), torch.tensor([[PAD] * 5 + [7, 11, 14]]))  # the last token changed
    mask = (rows[0] != PAD).long()
    stages = split_model(model, split_at, rule="count")
    with torch.no_grad():
        first = [stages.first(x, mask)[0, :5] for x in rows]
        logits = [pipeline_logits(model, x, mask, rule="count", split_points=split_at)[0] for x in rows]
        hidden = [model.base_model(input_ids=x, attention_mask=mask).last_hidden_state[0, :5] for x in rows]
    largest = {
        "first stage output at the pads": first[0] - first[1],
        "count-rule pipeline logits (pooled at a pad)": logits[0] - logits[1],
        "model.forward body at the pads": hidden[0] - hidden[1],
        "largest |hidden state| of the body at the pads": hidden[0],
    }
    return {name: float(f"{float(t.abs().max()):.3g}") for name, t in largest.items()}


def run_study(
    settings: StudySettings = StudySettings(),
    runs: Iterable[str] = tuple(RUNS),
    progress: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """Every run of ``runs`` on every seed; the versions and settings come with the results."""
    results: dict[str, Any] = {
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "settings": {**asdict(settings), "target_accuracy": TARGET, "family": "llama"},
        "pad_sight": pad_sight(split_at=settings.split_at),
        "runs": {},
    }
    for name in runs:
        run = RUNS[name]
        results["runs"][name] = {**asdict(run), "seeds": []}
        for seed in settings.seeds:
            record = _one_run(run, seed, settings)
            results["runs"][name]["seeds"].append(record)
            if progress:
                left, right = record["held_out_accuracy"]["left"], record["held_out_accuracy"]["right"]
                progress(f"{name:<40} seed {seed:>2}: held-out accuracy left {left:.2f} right {right:.2f}")
    return results


def outcome(accuracy: dict[str, Any]) -> str:
    """``learns`` (both sides >= TARGET), ``below 0.7`` (both sides < 0.7) or ``between``."""
    if min(accuracy.values()) >= TARGET:
        return "learns"
    return "below 0.7" if max(accuracy.values()) < 0.7 else "between"


def results_path() -> Path:
    return Path("results") / f"training_study_{transformers.__version__}.json"


def main(seeds: int = 10) -> dict[str, Any]:
    """The whole study on this version over ``seeds`` seeds (``train-study`` checks them and writes the record)."""
    torch.set_num_threads(1)
    settings = StudySettings(seeds=tuple(range(seeds)))
    return run_study(settings, progress=lambda line: print(line, file=sys.stderr, flush=True))
