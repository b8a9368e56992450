"""The split as a picture: what each stage holds and what travels between them.

Drawn from ``split_model``'s own stages, not a hand-written list: the boxes name the modules
each stage really runs (its layers; the norm and score head on the last), so the picture
changes when the split does.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from pp_demo.core import Stages
from pp_demo.figures.palette import MAX_WIDTH_IN, OKABE_ITO, PROJECTOR_PT, text_inches

__all__ = ["stage_contents", "draw_stage_split", "draw_stage_inputs", "draw_memory_per_device"]

SENT = "hidden states"  # all that crosses between ranks: the schedule hands each stage the ids and mask
LOGITS = "logits\n(batch, labels)"
_LINE_IN = 0.27  # one line of text at PROJECTOR_PT, with its leading
_SENT_LINES = SENT.count("\n") + 1
# a stage's colour only tells the boxes apart; the title names each
_STAGE_COLOURS = [OKABE_ITO["sky blue"], OKABE_ITO["orange"], OKABE_ITO["bluish green"], OKABE_ITO["yellow"]]


def stage_contents(stages: Stages) -> list[list[str]]:
    """Per stage, the lines its box shows: the embedding on the first, its layers, and the
    final norm, the pooling and the score head on the last (what the stage's modules really are)."""
    starts = (0, *stages.split_points)
    out = []
    for index, (stage, start) in enumerate(zip(stages, starts, strict=True)):
        lines = ["embedding"] if index == 0 else []
        layers = next(m for m in stage.get_submodule("body").children() if isinstance(m, torch.nn.ModuleList))
        last = start + len(layers) - 1
        lines.append(f"layers {start}-{last}" if last > start else f"layer {start}")
        if index == len(stages) - 1:
            lines += ["final norm", f"pooling: {stages.last.rule.name}", "score head"]  # pool, then score
        out.append(lines)
    return out


def draw_stage_split(stages: Stages) -> Figure:
    """Stage boxes left to right, the tensors that travel on each arrow, logits at the end; top
    to bottom instead where a row of them would be wider than ``MAX_WIDTH_IN``. Every text is
    at ``PROJECTOR_PT``; the boxes are sized from their measured lines, in inches."""
    contents = stage_contents(stages)
    titles = [f"stage {index} (rank {index})" for index in range(len(contents))]
    box_w = [
        max(text_inches(t, weight="bold"), *map(text_inches, lines)) + 0.3
        for t, lines in zip(titles, contents, strict=True)
    ]
    box_h = max(map(len, contents)) * _LINE_IN + 0.3
    gap = text_inches(SENT) + 0.4  # the sent tensors are written under each arrow
    tail = 0.6 + text_inches(LOGITS)  # the last arrow, then what comes out
    across = sum(box_w) + gap * (len(contents) - 1) + tail + 0.4
    if across <= MAX_WIDTH_IN:
        fig, ax = _canvas(across, box_h + _LINE_IN * (_SENT_LINES + 1) + 0.6)  # the title above, the sent lines below
        x, y = 0.2, _LINE_IN * _SENT_LINES + 0.3
        for index, (title, lines, w) in enumerate(zip(titles, contents, box_w, strict=True)):
            _stage(ax, x, y, w, box_h, title, lines, index)
            start = (x + w + 0.05, y + box_h / 2)
            end = (x + w + (gap if index < len(contents) - 1 else 0.5), start[1])
            _arrow(ax, start, end)
            if index < len(contents) - 1:
                ax.text(x + w + gap / 2, y - 0.05, SENT, ha="center", va="top", fontsize=PROJECTOR_PT)
            x += w + gap
        ax.text(end[0] + 0.1, end[1], LOGITS, ha="left", va="center", fontsize=PROJECTOR_PT)
        return fig
    # top to bottom, each box as tall as its own lines, each arrow as long as one line and its words
    # beside it: three stages stay within MAX_HEIGHT_IN
    width = max(box_w) + text_inches(SENT) + 0.8
    heights = [len(lines) * _LINE_IN + 0.2 for lines in contents]
    arrow_in = _LINE_IN + 0.1
    below = max(0.0, _LINE_IN * (LOGITS.count("\n") + 1) - arrow_in)  # the logits' lines past the arrow's end
    steps = [_LINE_IN + 0.05 + h + 0.05 + arrow_in + 0.1 for h in heights]  # a title, its box, the arrow out
    fig, ax = _canvas(width, sum(steps) + below + 0.1)
    top = sum(steps) + below + 0.05
    for index, (title, lines, h, step) in enumerate(zip(titles, contents, heights, steps, strict=True)):
        box_top = top - _LINE_IN - 0.05  # the title sits 0.12 above its box, 0.2 tall
        _stage(ax, 0.2, box_top - h, max(box_w), h, title, lines, index)
        middle = 0.2 + max(box_w) / 2
        arrow_top = box_top - h - 0.05
        _arrow(ax, (middle, arrow_top), (middle, arrow_top - arrow_in))
        if index < len(contents) - 1:  # the sent tensors beside the arrow, what comes out from its start down
            ax.text(middle + 0.15, arrow_top - arrow_in / 2, SENT, ha="left", va="center", fontsize=PROJECTOR_PT)
        else:
            ax.text(middle + 0.15, arrow_top, LOGITS, ha="left", va="top", fontsize=PROJECTOR_PT)
        top -= step
    return fig


def _canvas(width: float, height: float) -> tuple[Figure, Any]:
    """A figure whose one axes fills it with inches as data units: every placement above is in inches."""
    fig = plt.figure(figsize=(width, height))  # pyplot's, so a notebook's plt.show() shows it
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def _stage(ax: Any, x: float, y: float, w: float, h: float, title: str, lines: list[str], index: int) -> None:
    colour = _STAGE_COLOURS[index % len(_STAGE_COLOURS)]
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", facecolor=colour, alpha=0.35, lw=1.5))
    ax.text(x + w / 2, y + h + 0.12, title, ha="center", va="bottom", fontsize=PROJECTOR_PT, weight="bold")
    ax.text(x + w / 2, y + h / 2, "\n".join(lines), ha="center", va="center", fontsize=PROJECTOR_PT)


def _arrow(ax: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "lw": 2})


def draw_stage_inputs(inputs: Sequence[tuple[str, str, torch.Tensor]]) -> Figure:
    """What stage 1 gets, one arrow per tensor from where it comes (``(source, name, tensor)``:
    the hidden states from stage 0, the ids and mask from the schedule), each labelled with its
    name, shape and dtype, read from the tensors themselves."""
    labels = [f"{name}  {tuple(t.shape)}  {str(t.dtype).removeprefix('torch.')}" for _, name, t in inputs]
    sources = list(dict.fromkeys(source for source, _, _ in inputs))  # in order, each once
    box_w = max(text_inches(n, weight="bold") for n in [*sources, "stage 1"]) + 0.5
    gap = max(map(text_inches, labels)) + 0.6
    row = 0.62
    height = row * len(labels) + 0.4 * len(sources) + 0.6
    fig, ax = _canvas(2 * box_w + gap + 0.4, height)
    _stage(ax, 0.2 + box_w + gap, 0.3, box_w, height - 0.9, "stage 1", [], 1)
    y = height - 0.75
    for index, source in enumerate(sources):
        rows = [label for (s, _, _), label in zip(inputs, labels, strict=True) if s == source]
        top = y
        for label in rows:
            _arrow(ax, (0.25 + box_w, y), (0.15 + box_w + gap, y))
            ax.text(0.2 + box_w + gap / 2, y + 0.06, label, ha="center", va="bottom", fontsize=PROJECTOR_PT)
            y -= row
        box_h = top - y - row + 0.5
        _stage(ax, 0.2, top - box_h + 0.25, box_w, box_h, "", [source], 0 if source == "stage 0" else 2 + index)
        y -= 0.4
    return fig


def draw_memory_per_device(columns: Mapping[str, Mapping[str, float]], device_gib: float) -> Figure:
    """Bars of memory in GiB, one per column (the whole model, then each stage on its own
    device), stacked by what the memory holds, against the line of one device's memory."""
    parts = list(next(iter(columns.values())))
    fig, ax = plt.subplots(figsize=(MAX_WIDTH_IN, 5.2), layout="constrained")
    bottom = [0.0] * len(columns)
    colours = [OKABE_ITO[c] for c in ("blue", "orange", "bluish green", "reddish purple")]
    for part, colour in zip(parts, colours, strict=False):
        values = [column[part] for column in columns.values()]
        ax.bar(list(columns), values, bottom=bottom, color=colour, label=part)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.axhline(device_gib, color="black", linestyle="--", lw=2, label=f"one device: {device_gib:g} GiB")
    for x, total in enumerate(bottom):
        ax.text(x, total + 2, f"{total:.0f}", ha="center", va="bottom", fontsize=PROJECTOR_PT)
    ax.set_ylabel("GiB", fontsize=PROJECTOR_PT)
    ax.set_ylim(0, max(*bottom, device_gib) * 1.18)
    ax.tick_params(labelsize=PROJECTOR_PT)
    ax.legend(fontsize=PROJECTOR_PT, loc="upper right", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig
