"""Figures of the training study (notebook 05): Okabe-Ito colours, a marker per padding side
so nothing is told by colour alone, text of 10 pt or more. Each returns the ``Figure``."""

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from pp_demo.figures.palette import CHANCE_LINE, OKABE_ITO, TARGET_LINE

__all__ = ["RUN_STYLES", "draw_study_distributions", "draw_one_seed_curves"]

RUN_STYLES = {
    "count": (OKABE_ITO["vermillion"], "-"),
    "fix": (OKABE_ITO["bluish green"], "--"),
    "count, pad-pooled rows out of the loss": (OKABE_ITO["orange"], "-."),
    "first_pad, pad == eos": (OKABE_ITO["reddish purple"], ":"),
    "fix, pad == eos": (OKABE_ITO["blue"], (0, (5, 1))),
    "model.forward": (OKABE_ITO["black"], "-"),
}
"""One colour of the palette (``pp_demo.figures.palette``) and one line style per run of the study."""
SIDE_MARKERS = {"left": "o", "right": "^"}


def _jitter(i: int, n: int) -> float:
    # deterministic spread of n points around 0, so equal accuracies stay visible
    return 0.0 if n == 1 else (i / (n - 1) - 0.5) * 0.22


def draw_study_distributions(results_by_version: dict[str, Any], target: float = 0.9) -> Figure:
    """Held-out accuracy (``model.forward``) of every seed, per run and padding side, one panel
    per transformers version. ``results_by_version`` maps a version to its results file."""
    versions = list(results_by_version)
    runs = list(next(iter(results_by_version.values()))["runs"])
    fig, axes = plt.subplots(1, len(versions), figsize=(6.8 * len(versions), 5.2), sharey=True, squeeze=False)
    for ax, version in zip(axes[0], versions, strict=True):
        for x, name in enumerate(runs):
            seeds = results_by_version[version]["runs"][name]["seeds"]
            colour, _ = RUN_STYLES[name]
            for offset, side in ((-0.2, "left"), (0.2, "right")):
                label = "left-padded rows" if side == "left" else "right-padded or full rows"
                for i, record in enumerate(seeds):
                    ax.scatter(
                        x + offset + _jitter(i, len(seeds)),
                        record["held_out_accuracy"][side],
                        color=colour,
                        marker=SIDE_MARKERS[side],
                        s=30,
                        edgecolor="black",
                        linewidth=0.4,
                        label=label if (x, i) == (0, 0) else None,
                    )
        ax.axhline(target, color=TARGET_LINE, linestyle="--", linewidth=1)
        ax.axhline(1 / 3, color=CHANCE_LINE, linestyle=":", linewidth=1)
        names = [n.replace(", ", ",\n").replace("rows out", "rows\nout") for n in runs]
        ax.set_xticks(range(len(runs)), names, fontsize=10)
        ax.set_title(f"transformers {version}", fontsize=12)
        ax.tick_params(labelsize=10)
        ax.set_ylim(0.2, 1.03)
    axes[0][0].set_ylabel("held-out accuracy (model.forward)", fontsize=11)
    axes[0][0].text(len(runs) - 0.5, target + 0.01, f"{target}", fontsize=10, ha="right", va="bottom")
    axes[0][0].text(len(runs) - 0.5, 1 / 3 + 0.01, "chance", fontsize=10, ha="right", va="bottom")
    axes[0][-1].legend(fontsize=10, loc="lower right", frameon=True)
    fig.tight_layout()
    return fig


def draw_one_seed_curves(losses: dict[str, Any], curves: dict[str, Any], target: float = 0.9) -> Figure:
    """One seed's runs: training loss per step (left) and held-out accuracy of ``model.forward``
    every few steps, per padding side (middle, right), for the runs in ``curves`` (rows:
    ``[step, left, right]``)."""
    fig, axes = plt.subplots(1, 3, figsize=(13.0, 4.0))
    for name, values in losses.items():
        colour, style = RUN_STYLES[name]
        axes[0].plot(range(1, len(values) + 1), values, color=colour, linestyle=style, linewidth=1.8, label=name)
        for col, side in ((1, "left"), (2, "right")) if name in curves else ():
            steps = [row[0] for row in curves[name]]
            axes[col].plot(
                steps,
                [row[col] for row in curves[name]],
                color=colour,
                linestyle=style,
                marker=SIDE_MARKERS[side],
                markersize=5,
                linewidth=1.8,
                label=name,
            )
    axes[0].set_ylabel("training loss", fontsize=11)
    for col, side in ((1, "left"), (2, "right")):
        axes[col].set_title(f"held-out, {side}-padded rows", fontsize=11)
        axes[col].axhline(target, color=TARGET_LINE, linestyle="--", linewidth=1)
        axes[col].axhline(1 / 3, color=CHANCE_LINE, linestyle=":", linewidth=1)
        axes[col].set_ylim(0.2, 1.03)
        axes[col].set_ylabel("accuracy (model.forward)", fontsize=11)
    for ax in axes:
        ax.set_xlabel("training step", fontsize=11)
        ax.tick_params(labelsize=10)
    axes[0].legend(fontsize=10, frameon=False)
    fig.tight_layout()
    return fig
