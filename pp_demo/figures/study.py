"""Figures of the training study (notebook 05), for a projector: Okabe-Ito colours with no two
neighbours alike, a marker per padding side (filled circles, hollow squares: ``SIDE_SHAPES``) so
nothing is told by colour alone, at most 10 inches wide and 7.4 tall (side by side where stacking
would not fit), text at 14 pt, every reference line labelled in the legend. Each returns the
``Figure``."""

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from pp_demo.figures.palette import CHANCE_LINE, MAX_HEIGHT_IN, MAX_WIDTH_IN, OKABE_ITO, PROJECTOR_PT, TARGET_LINE

__all__ = ["RUN_STYLES", "SIDE_MARKERS", "SIDE_SHAPES", "draw_study_distributions", "draw_one_seed_curves"]

RUN_STYLES = {
    "count": (OKABE_ITO["vermillion"], "-"),
    "fix": (OKABE_ITO["bluish green"], "--"),
    "count, pad-pooled rows out of the loss": (OKABE_ITO["sky blue"], "-."),
    "first_pad, pad == eos": (OKABE_ITO["reddish purple"], ":"),
    "fix, pad == eos": (OKABE_ITO["blue"], (0, (5, 1))),
    "model.forward": (OKABE_ITO["black"], "-"),
}
"""One colour of the palette (``pp_demo.figures.palette``) and one line style per run of the study."""
SIDE_MARKERS = {"left": "o", "right": "s"}
MARKER_WORDS = {"o": "circles", "s": "squares", "^": "triangles", "v": "triangles", "D": "diamonds"}
"""What to call a matplotlib marker in prose."""
SIDE_SHAPES = {side: MARKER_WORDS[marker] for side, marker in SIDE_MARKERS.items()}
"""The word for each padding side's marker, as the prose about these figures must say it."""
SIDE_FILLED = {"left": True, "right": False}  # right-padded rows hollow: shape and fill both differ
# the held-out rows of each side: a "right" row may have no pad at all (a full row ends on a real token)
SIDE_ROWS = {"left": "left-padded rows", "right": "right-padded or full rows"}
FONT = PROJECTOR_PT


def _reference_lines(ax: Any, target: float, across: bool = True) -> None:
    """The target and chance lines: across the panel (accuracy up), or upright (accuracy along)."""
    line = ax.axhline if across else ax.axvline
    line(target, color=TARGET_LINE, linestyle="--", linewidth=1.5, label=f"target {target}")
    line(1 / 3, color=CHANCE_LINE, linestyle=":", linewidth=1.5, label="chance (1 in 3)")
    (ax.set_ylim if across else ax.set_xlim)(0.2, 1.03)


def _side_key() -> list[Any]:
    # the sides in black: in a run's colour the key would seem to speak of that run alone
    return [
        Line2D([], [], linestyle="none", marker=SIDE_MARKERS[side], markersize=9, markeredgewidth=1.5,
               markerfacecolor="black" if SIDE_FILLED[side] else "white", markeredgecolor="black", label=label)
        for side, label in SIDE_ROWS.items()
    ]  # fmt: skip


def draw_study_distributions(results_by_version: dict[str, Any], target: float = 0.9) -> Figure:
    """Held-out accuracy (``model.forward``) of every seed, per run and padding side, one panel
    per transformers version, side by side (the runs named once, on the left; accuracy along).
    ``results_by_version`` maps a version to its results file."""
    versions = list(results_by_version)
    runs = list(next(iter(results_by_version.values()))["runs"])
    height = min(MAX_HEIGHT_IN, 1.0 * len(runs) + 2.2)
    fig, axes = plt.subplots(
        1, len(versions), figsize=(MAX_WIDTH_IN, height), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, version in zip(axes[0], versions, strict=True):
        for y, name in enumerate(runs):
            seeds = results_by_version[version]["runs"][name]["seeds"]
            colour, _ = RUN_STYLES[name]
            for offset, side in ((0.2, "left"), (-0.2, "right")):
                face, edge = (colour, "black") if SIDE_FILLED[side] else ("white", colour)
                for i, record in enumerate(seeds):
                    # a deterministic spread of the seeds around y, so equal accuracies stay visible
                    jitter = 0.0 if len(seeds) == 1 else (i / (len(seeds) - 1) - 0.5) * 0.22
                    xy = record["held_out_accuracy"][side], -(y + offset + jitter)
                    ax.scatter(*xy, facecolor=face, edgecolor=edge, marker=SIDE_MARKERS[side], s=70, linewidth=1.5)
        _reference_lines(ax, target, across=False)
        names = [n.replace(", ", ",\n").replace("rows out", "rows\nout") for n in runs]
        ax.set_yticks([-y for y in range(len(runs))], names, fontsize=FONT)
        ax.set_title(f"transformers {version}", fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        ax.set_xlabel("held-out accuracy\n(model.forward)", fontsize=FONT)
    handles = _side_key() + axes[0][0].get_legend_handles_labels()[0]
    fig.legend(handles=handles, fontsize=FONT, loc="outside upper center", ncol=2, frameon=False)
    return fig


def draw_one_seed_curves(losses: dict[str, Any], curves: dict[str, Any], target: float = 0.9) -> Figure:
    """One seed's runs: training loss per step (top) and held-out accuracy of ``model.forward``
    every few steps, per padding side (below, side by side), for the runs in ``curves`` (rows:
    ``[step, left, right]``)."""
    fig = plt.figure(figsize=(MAX_WIDTH_IN, MAX_HEIGHT_IN), layout="constrained")  # one screen
    panels = fig.subplot_mosaic([["loss", "loss"], ["left", "right"]], sharex=True)
    panels["right"].sharey(panels["left"])
    for name, values in losses.items():
        colour, style = RUN_STYLES[name]
        line: dict[str, Any] = {"color": colour, "linestyle": style, "linewidth": 1.8, "label": name}
        panels["loss"].plot(range(1, len(values) + 1), values, **line)
        for col, side in ((1, "left"), (2, "right")) if name in curves else ():
            steps, accuracies = [row[0] for row in curves[name]], [row[col] for row in curves[name]]
            fill = colour if SIDE_FILLED[side] else "white"
            panels[side].plot(steps, accuracies, marker=SIDE_MARKERS[side], markerfacecolor=fill, markersize=7, **line)
    panels["loss"].set_title("training loss, per step", fontsize=FONT)
    panels["loss"].set_ylabel("loss", fontsize=FONT)
    for side in ("left", "right"):
        panels[side].set_title(f"held-out accuracy,\n{SIDE_ROWS[side]}", fontsize=FONT)
        _reference_lines(panels[side], target)
        panels[side].set_xlabel("training step", fontsize=FONT)
    panels["left"].set_ylabel("accuracy\n(model.forward)", fontsize=FONT)
    for ax in panels.values():
        ax.tick_params(labelsize=FONT)
    # one key above the panels: a legend inside a panel would sit on the count run's curve
    handles = panels["loss"].get_legend_handles_labels()[0] + panels["left"].get_legend_handles_labels()[0][-2:]
    fig.legend(handles=handles, fontsize=FONT, frameon=False, loc="outside upper center", ncol=3)
    return fig
