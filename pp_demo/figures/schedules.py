"""Schedules as timelines (notebook 10), placed from the order the engine runs
(``pp_demo.pipeline.schedules``): Okabe-Ito colours, backwards hatched and every box labelled, so
nothing is told by colour alone; text of 10 pt or more. Each returns the ``Figure``."""

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pp_demo.figures.palette import MIN_FONT_PT, OKABE_ITO
from pp_demo.pipeline.schedules import peak_in_flight, schedule_order, timeline

__all__ = ["draw_timeline"]


_SCHEDULE_NAMES = {"gpipe": "GPipe", "1f1b": "1F1B"}


def draw_timeline(kind: str = "gpipe", n_stages: int = 2, n_micro: int = 4, backward: bool = True) -> Figure:
    """A schedule's training step as a timeline, built from ``pp_demo.pipeline.schedules.timeline``
    (the order the engine runs): one row per stage (rank), one box per op, blank slots the
    bubble. Forwards are plain boxes labelled F<i>, backwards hatched boxes labelled B<i>, so
    the two differ without colour. At each row's end: the most micro-batches whose
    activations that rank holds at once. ``backward=False`` draws forwards only."""
    slots = [t for t in timeline(kind, n_stages, n_micro) if backward or t[2][0] == "F"]
    order = schedule_order(kind, n_stages, n_micro)
    length = max(slot for _, slot, _ in slots) + 1
    fig, ax = plt.subplots(figsize=(0.62 * length + 3.4, 0.62 * n_stages + 1.3))
    for stage, slot, op in slots:
        forward = op[0] == "F"
        ax.add_patch(
            Rectangle(
                (slot, n_stages - 1 - stage),
                0.95,
                0.8,
                edgecolor="black",
                lw=0.6,
                facecolor=OKABE_ITO["sky blue"] if forward else OKABE_ITO["orange"],
                hatch=None if forward else "///",
            )
        )
        ax.text(
            slot + 0.47,
            n_stages - 0.6 - stage,
            op,
            ha="center",
            va="center",
            fontsize=MIN_FONT_PT,
            bbox=None if forward else {"facecolor": "white", "edgecolor": "none", "pad": 0.5},
        )
    if backward:
        for stage, ops in enumerate(order):
            ax.text(
                length + 0.3,
                n_stages - 0.6 - stage,
                f"holds ≤ {peak_in_flight(ops)}",
                ha="left",
                va="center",
                fontsize=MIN_FONT_PT,
            )
    ax.set_xlim(0, length + (2.6 if backward else 0.2))
    ax.set_ylim(-0.2, n_stages)
    ax.set_yticks(
        [n_stages - 0.6 - s for s in range(n_stages)], [f"rank {s}" for s in range(n_stages)], fontsize=MIN_FONT_PT
    )
    ax.set_xticks(range(0, length + 1, 2), [str(t) for t in range(0, length + 1, 2)], fontsize=MIN_FONT_PT)
    ax.set_xlabel("time slot (one micro-batch through one stage)", fontsize=MIN_FONT_PT)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    what = "forwards and backwards (hatched)" if backward else "forwards"
    ax.set_title(
        f"{_SCHEDULE_NAMES[kind]}, {n_stages} stages, {n_micro} micro-batches: {what}; blank = idle",
        fontsize=MIN_FONT_PT,
    )
    fig.tight_layout()
    return fig
