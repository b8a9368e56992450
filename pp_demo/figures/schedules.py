"""Schedules as timelines (notebook 10), placed from the order the engine runs
(``pp_demo.ranks.schedules``): Okabe-Ito colours, backwards hatched and every box labelled, so
nothing is told by colour alone; for a projector, at most ``MAX_WIDTH_IN`` wide with text at
``PROJECTOR_PT`` and the key in a legend. Each returns the ``Figure``."""

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from pp_demo.figures.palette import MAX_WIDTH_IN, OKABE_ITO, PROJECTOR_PT, text_inches
from pp_demo.ranks.schedules import peak_in_flight, schedule_order, timeline

__all__ = ["draw_timeline"]


_SCHEDULE_NAMES = {"gpipe": "GPipe", "1f1b": "1F1B"}
_FORWARD, _BACKWARD = OKABE_ITO["sky blue"], OKABE_ITO["orange"]  # light and dark: apart in grey too
_ROW_IN = 0.62  # inches per stage row: a box label at PROJECTOR_PT with room around it
_ON_HATCHING = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}  # a backward's label, clear of its hatch


def draw_timeline(kind: str = "gpipe", n_stages: int = 2, n_micro: int = 4, backward: bool = True) -> Figure:
    """A schedule's training step as a timeline: one row per stage (rank), one box per op (F<i>,
    hatched B<i>), blank slots the bubble; at each row's end, the most micro-batches whose
    activations that rank holds at once (``backward=False``: forwards only). The slot width is
    what is left of ``MAX_WIDTH_IN`` once the rank labels and the "holds" column are measured."""
    slots = [t for t in timeline(kind, n_stages, n_micro) if backward or t[2][0] == "F"]
    order = schedule_order(kind, n_stages, n_micro)
    length = max(slot for _, slot, _ in slots) + 1
    holds = [f"holds ≤ {peak_in_flight(ops)}" for ops in order] if backward else []
    left_in = text_inches(f"rank {n_stages - 1}") + 0.45  # the label, its tick and the pad
    right_in = max((text_inches(h) + 0.35 for h in holds), default=0.2)
    slot_in = min(0.62, (MAX_WIDTH_IN - left_in - right_in - 0.1) / length)
    what = "forwards and backwards" if backward else "forwards"
    title = f"{_SCHEDULE_NAMES[kind]}, {n_stages} stages, {n_micro} micro-batches: {what}"
    key = [Patch(facecolor=_FORWARD, edgecolor="black", label="F<i>: forward of micro-batch i")]
    if backward:
        key.append(Patch(facecolor=_BACKWARD, edgecolor="black", hatch="///", label="B<i>: its backward"))
    key.append(Patch(facecolor="white", edgecolor="#999999", label="blank: idle (the bubble)"))
    # the legend's first row, its widest: the forward entry and the idle one, each with its patch
    key_row_in = sum(text_inches(str(patch.get_label())) + 1.0 for patch in (key[0], key[-1]))
    width = max(left_in + slot_in * length + right_in, text_inches(title) + 0.3, key_row_in)
    height = _ROW_IN * n_stages + 1.7 + 0.35 * ((len(key) + 1) // 2)  # title, axis and key
    fig, ax = plt.subplots(figsize=(min(width, MAX_WIDTH_IN), height), layout="constrained")
    middle = [n_stages - 0.6 - stage for stage in range(n_stages)]  # each stage row's middle, rank 0 on top
    for stage, slot, op in slots:
        colour, hatch, label_box = (_FORWARD, None, None) if op[0] == "F" else (_BACKWARD, "///", _ON_HATCHING)
        bottom = n_stages - 1 - stage
        ax.add_patch(Rectangle((slot, bottom), 0.95, 0.8, edgecolor="black", lw=0.6, facecolor=colour, hatch=hatch))
        ax.text(slot + 0.47, middle[stage], op, ha="center", va="center", fontsize=PROJECTOR_PT, bbox=label_box)
    for stage, text in enumerate(holds):
        ax.text(length + 0.3, middle[stage], text, ha="left", va="center", fontsize=PROJECTOR_PT)
    ax.set_xlim(0, length + right_in / slot_in)
    ax.set_ylim(-0.2, n_stages)
    ax.set_yticks(middle, [f"rank {s}" for s in range(n_stages)], fontsize=PROJECTOR_PT)
    ax.set_xticks(range(0, length + 1, 2), [str(t) for t in range(0, length + 1, 2)], fontsize=PROJECTOR_PT)
    ax.set_xlabel("time slot (one micro-batch through one stage)", fontsize=PROJECTOR_PT)
    ax.spines[["top", "right", "left"]].set_visible(False)
    ax.set_title(title, fontsize=PROJECTOR_PT)
    # below the axis: the key, not a paragraph of title
    fig.legend(handles=key, loc="outside lower center", ncol=2, fontsize=PROJECTOR_PT, frameon=False)
    return fig
