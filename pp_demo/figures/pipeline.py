"""The split as a picture: what each stage holds and what travels between them.

Drawn from ``split_model``'s own stages, not from a hand-written list: the boxes name the
modules each stage really runs (its layers, and the norm and score head on the last one), so
the picture changes when the split does.
"""

from typing import Any

import torch
from matplotlib.figure import Figure

from pp_demo.figures.palette import OKABE_ITO
from pp_demo.pipeline.stages import Stages

__all__ = ["stage_contents", "draw_stage_split"]

FONT_PT = 14  # readable on a projector at the figure's full width
SENT = "hidden states\ninput_ids\nattention_mask"


def _layer_range(body: Any, first_layer: int) -> str:
    layers = next(module for name, module in body.named_children() if isinstance(module, torch.nn.ModuleList))
    last = first_layer + len(layers) - 1
    return f"layers {first_layer}-{last}" if last > first_layer else f"layer {first_layer}"


def stage_contents(stages: Stages) -> list[list[str]]:
    """Per stage, the lines its box shows: the embedding on the first, its layers, and the
    final norm, the pooling and the score head on the last (what the stage's modules really are)."""
    starts = (0, *stages.split_points)
    out = []
    for index, (stage, start) in enumerate(zip(stages, starts, strict=True)):
        lines = ["embedding"] if index == 0 else []
        lines.append(_layer_range(stage.body, start))
        if index == len(stages) - 1:
            lines += ["final norm", f"pooling: {stages.last.rule}", "score head"]  # pool, then score
        out.append(lines)
    return out


def draw_stage_split(stages: Stages) -> Figure:
    """Stage boxes left to right, the tensors that travel on each arrow, logits at the end."""
    contents = stage_contents(stages)
    n = len(contents)
    fig = Figure(figsize=(10, 3.6))
    ax = fig.add_subplot()
    ax.set_xlim(-0.2, 4 * n - 1)
    ax.set_ylim(0, 4)
    ax.axis("off")
    colours = [OKABE_ITO["sky blue"], OKABE_ITO["orange"], OKABE_ITO["bluish green"], OKABE_ITO["yellow"]]
    for index, lines in enumerate(contents):
        left = 4 * index
        ax.add_patch(_box(left, colours[index % len(colours)]))
        ax.text(left + 1.25, 3.55, f"stage {index} (rank {index})", ha="center", fontsize=FONT_PT, weight="bold")
        ax.text(left + 1.25, 1.75, "\n".join(lines), ha="center", va="center", fontsize=FONT_PT)
        if index < n - 1:
            ax.annotate("", xy=(left + 4, 1.75), xytext=(left + 2.5, 1.75), arrowprops={"arrowstyle": "->", "lw": 2})
            ax.text(left + 3.25, 0.2, SENT, ha="center", va="bottom", fontsize=FONT_PT - 2)
    ax.text(4 * n - 1, 0.2, "logits\n(batch, labels)", ha="right", va="bottom", fontsize=FONT_PT - 2)
    fig.tight_layout()
    return fig


def _box(left: float, colour: str) -> Any:
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch((left, 0.6), 2.5, 2.6, boxstyle="round,pad=0.05", facecolor=colour, alpha=0.35, lw=1.5)
