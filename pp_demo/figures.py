"""Figures drawn with matplotlib. Each returns the ``Figure`` so notebooks show it and
scripts can ``savefig`` it; none calls ``plt.show``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .packed import class_grid
from .schedules import gpipe_slots
from .table import REFERENCES, padding_table, resolve_cases

if TYPE_CHECKING:  # for annotations only: training pulls in transformers
    import torch

    from .cases import PaddingCase
    from .compare import RowComparison
    from .table import Verdict
    from .training import TrainingBatch

__all__ = ["draw_padding_table", "draw_row_diffs", "draw_gpipe_timeline", "draw_class_grid"]

_PAD_SHADE = "#d9d9d9"   # positions the attention mask marks as padding
_RIGHT = "#1a9850"
_WRONG = "#d73027"


def draw_padding_table(rules: Sequence[str] | None = None, cases: Sequence[str | PaddingCase] | None = None,
                       reference: str = "true_last", pad_token_id: int = 0) -> Figure:
    """Tokens as a grid (one row per case, one block per rule), pads shaded, each rule's
    pooled position outlined: green when it matches ``reference``, red when not, grey
    when the reference has no answer (the all-pad row judged by the true last token).
    ``cases`` may hold ``PaddingCase`` objects of your own, of any length."""
    cases = resolve_cases(cases)
    table = padding_table(rules, cases, reference, pad_token_id)
    rules = [cell.rule for cell in table[0]]
    width = max(case.length for case in cases) + 1
    fig, ax = plt.subplots(figsize=(1.9 * len(rules) + 1.6, 0.48 * len(table) + 1.3))
    for i, (case, row) in enumerate(zip(cases, table)):
        for j, cell in enumerate(row):
            x0 = j * width
            for k, (token, real) in enumerate(zip(case.input_ids, case.attention_mask)):
                ax.add_patch(Rectangle((x0 + k, -i), 1, 1, facecolor="white" if real else _PAD_SHADE,
                                       edgecolor="#999999", linewidth=0.5))
                ax.text(x0 + k + 0.5, -i + 0.5, str(token), ha="center", va="center", fontsize=7)
            colour = "#777777" if cell.right is None else (_RIGHT if cell.right else _WRONG)
            ax.add_patch(Rectangle((x0 + cell.lands_on, -i), 1, 1, fill=False, edgecolor=colour, linewidth=2.2))
    for j, rule in enumerate(rules):
        ax.text(j * width + (width - 1) / 2, 1.25, rule, ha="center", va="bottom", fontsize=8, weight="bold")
    for i, row in enumerate(table):
        ax.text(-0.3, -i + 0.5, row[0].case, ha="right", va="center", fontsize=8)
    ax.set_xlim(-5.5, len(rules) * width)
    ax.set_ylim(-len(table) + 0.8, 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"pooled position per rule, judged by {REFERENCES[reference]}\n"
                 "shaded: padding (mask 0)   green: right   red: wrong", fontsize=9)
    fig.tight_layout()
    return fig


def draw_row_diffs(comparisons: Mapping[tuple[str, str], RowComparison], row_labels: Sequence[str]) -> Figure:
    """Per-row max |logit difference| against ``model.forward``, one panel per family.

    ``comparisons`` maps ``(family, rule)`` to a ``RowComparison``. A bar at zero (the
    fix) is labelled, since an absent bar reads like missing data."""
    families = list(dict.fromkeys(f for f, _ in comparisons))
    rules = list(dict.fromkeys(r for _, r in comparisons))
    colours = dict(zip(rules, [_WRONG, _RIGHT, "#4575b4", "#fdae61", "#762a83"]))
    fig, axes = plt.subplots(1, len(families), figsize=(3.3 * len(families), 3.0), sharey=True, squeeze=False)
    width = 0.8 / len(rules)
    top = max(max(c.max_abs_diff) for c in comparisons.values())
    for ax, family in zip(axes[0], families):
        for j, rule in enumerate(rules):
            diffs = comparisons[family, rule].max_abs_diff
            xs = [i + (j - (len(rules) - 1) / 2) * width for i in range(len(diffs))]
            ax.bar(xs, diffs, width, color=colours[rule], label=rule)
            for x, d in zip(xs, diffs):
                if d == 0:
                    ax.text(x, top * 0.02, "0", ha="center", va="bottom", fontsize=7, color=colours[rule])
        ax.set_xticks(range(len(row_labels)), row_labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(family, fontsize=9)
    axes[0][0].set_ylabel("max |logit diff| vs model.forward", fontsize=8)
    axes[0][-1].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def draw_gpipe_timeline(n_micro: int = 4, n_stages: int = 2, backward: bool = False) -> Figure:
    """The GPipe schedule as a timeline: one row per stage (rank), one box per micro-batch
    step, idle slots (the bubble) left blank. The title gives the ideal speedup over one
    process running all stages, ``n_stages * m / (m + n_stages - 1)`` for forwards."""
    slots = gpipe_slots(n_micro, n_stages, backward)
    length = max(slot for _, slot, _, _ in slots) + 1
    fig, ax = plt.subplots(figsize=(0.55 * length + 1.5, 0.6 * n_stages + 1.0))
    for stage, slot, kind, mb in slots:
        colour = "#91bfdb" if kind == "F" else "#fc8d59"
        ax.add_patch(Rectangle((slot, n_stages - 1 - stage), 0.95, 0.8, facecolor=colour, edgecolor="black", lw=0.5))
        ax.text(slot + 0.47, n_stages - 1 - stage + 0.4, f"{kind}{mb}", ha="center", va="center", fontsize=8)
    ax.set_xlim(0, length)
    ax.set_ylim(-0.2, n_stages)
    ax.set_yticks([n_stages - 1 - s + 0.4 for s in range(n_stages)], [f"stage {s} (rank {s})" for s in range(n_stages)])
    ax.set_xlabel("time slot (one micro-batch through one stage)")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ideal = n_stages * n_micro / (n_micro + n_stages - 1)
    ax.set_title(f"GPipe, {n_micro} micro-batches on {n_stages} stages: blank = idle (the bubble); "
                 f"ideal speedup {ideal:.2f}x", fontsize=9)
    fig.tight_layout()
    return fig


_GRID_FILL = {"right": _RIGHT, "wrong": _WRONG, "no answer": "#bdbdbd", "cannot run": "white"}


def draw_class_grid(grid: list[list[Verdict]] | None = None) -> Figure:
    """Rule x case, each cell coloured by whether the rule finds the true last real token
    (green right, red wrong, grey no real token, white with a hatch when the rule cannot
    run on that kind of batch) and labelled with the raw position(s) it returns.
    ``grid`` is ``pp_demo.packed.class_grid()``'s result, computed when not given."""
    grid = grid if grid is not None else class_grid()
    cases = [v.case for v in grid[0]]
    fig, ax = plt.subplots(figsize=(0.62 * len(cases) + 3.0, 0.5 * len(grid) + 1.9))
    for i, row in enumerate(grid):
        for j, verdict in enumerate(row):
            hatch = "//" if verdict.status == "cannot run" else None
            ax.add_patch(Rectangle((j, -i), 1, 1, facecolor=_GRID_FILL[verdict.status], hatch=hatch,
                                   edgecolor="#999999", linewidth=0.5))
            label = "n/a" if verdict.positions is None else ",".join(map(str, verdict.positions))
            colour = "white" if verdict.status in ("right", "wrong") else "black"
            ax.text(j + 0.5, -i + 0.5, label, ha="center", va="center", fontsize=7, color=colour)
        ax.text(-0.1, -i + 0.5, f"({row[0].rule_class}) {row[0].rule}", ha="right", va="center", fontsize=8)
    for j, case in enumerate(cases):
        ax.text(j + 0.5, 1.1, case, ha="left", va="bottom", rotation=35, fontsize=8)
    ax.set_xlim(-4.0, len(cases) + 1.2)
    ax.set_ylim(-len(grid) + 0.9, 3.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("which rule finds the last real token (cell: raw position returned)\n"
                 "green right   red wrong   grey no real token   hatched: cannot run on this batch",
                 fontsize=9)
    fig.tight_layout()
    return fig


# ---- notebook 05: training through the pipeline

import math  # noqa: E402  (kept with the section that uses it)

__all__ += ["side_curves", "draw_training_curves"]

_SIDES = ("left", "right")   # as pp_demo.training, imported lazily: it loads transformers

_RUN_STYLES = [("#4575b4", "-", 3.2), (_WRONG, "-", 1.6), (_RIGHT, "--", 1.6), ("#fdae61", ":", 1.6)]


def side_curves(step_logits: Sequence[torch.Tensor],
                batches: Sequence[TrainingBatch]) -> dict[str, dict[str, list[float]]]:
    """Per step, the mean loss and the accuracy among left-padded and among right-padded
    rows: ``{"loss": {"left": [...], "right": [...]}, "accuracy": {...}}``. ``step_logits``
    are the logits each step computed (before its update), ``batches`` the training batches."""
    import torch.nn.functional as F

    from .training import accuracy_by_side

    curves = {"loss": {side: [] for side in _SIDES}, "accuracy": {side: [] for side in _SIDES}}
    for logits, batch in zip(step_logits, batches, strict=True):
        loss = F.cross_entropy(logits.float().cpu(), batch.labels, reduction="none")
        accuracy = accuracy_by_side(logits.cpu(), batch)
        for side, rows in zip(_SIDES, (batch.left_padded, ~batch.left_padded)):
            curves["loss"][side].append(float(loss[rows].mean()) if rows.any() else float("nan"))
            curves["accuracy"][side].append(accuracy[side])
    return curves


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    out = []
    for i in range(len(values)):
        recent = [v for v in values[max(0, i - window + 1):i + 1] if not math.isnan(v)]
        out.append(sum(recent) / len(recent) if recent else float("nan"))
    return out


def draw_training_curves(runs: Mapping[str, Any], batches: Sequence[TrainingBatch], window: int = 5) -> Figure:
    """Loss (top) and accuracy (bottom) over the training steps, left-padded rows on the
    left, right-padded (or full) rows on the right, one colour per run. ``runs`` maps a run's name
    to its per-step logits; each curve is the mean over the last ``window`` steps (a batch
    holds only a few rows per side). Dotted grey lines: chance (uniform guess)."""
    if not 1 <= len(runs) <= len(_RUN_STYLES):
        raise ValueError(f"draw_training_curves draws 1 to {len(_RUN_STYLES)} runs, got {len(runs)}")
    num_labels = next(iter(runs.values()))[0].shape[-1]
    chance = {"loss": math.log(num_labels), "accuracy": 1 / num_labels}
    fig, axes = plt.subplots(2, 2, figsize=(9.0, 5.6), sharex=True, sharey="row")
    for (name, step_logits), (colour, style, width) in zip(runs.items(), _RUN_STYLES):
        curves = side_curves(step_logits, batches)
        for row, metric in enumerate(("loss", "accuracy")):
            for col, side in enumerate(_SIDES):
                values = _moving_average(curves[metric][side], window)
                axes[row][col].plot(range(1, len(values) + 1), values, color=colour, linestyle=style,
                                    linewidth=width, label=name)
    for row, metric in enumerate(("loss", "accuracy")):
        for col, side in enumerate(_SIDES):
            ax = axes[row][col]
            ax.axhline(chance[metric], color="#999999", linestyle=":", linewidth=1)
            if row == 0:
                ax.set_title("left-padded rows" if side == "left" else "right-padded or full rows", fontsize=9)
            else:
                ax.set_xlabel("training step", fontsize=8)
            ax.tick_params(labelsize=8)
        axes[row][0].set_ylabel(f"{metric} (mean of last {window} steps)", fontsize=8)
    axes[1][0].set_ylim(-0.03, 1.03)
    axes[0][1].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
