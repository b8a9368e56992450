"""The benchmark's figure: one training step's timeline, and every row's breakdown.

Okabe-Ito colours, each part also hatched, so the figure reads in grey and for every
colour vision; at most 10 in wide with text of 14 pt, for a projector (pp_demo.figures.palette).
"""

from __future__ import annotations

from typing import Any

from pp_demo.figures.palette import MAX_WIDTH_IN, OKABE_ITO, PROJECTOR_PT

__all__ = ["draw_bench", "PARTS"]

# part of the breakdown -> (label, Okabe-Ito colour, hatch)
PARTS = {
    "compute_s": ("compute", OKABE_ITO["blue"], ""),
    "idle_s": ("idle (bubble)", OKABE_ITO["orange"], "//"),
    "p2p_wait_s": ("waiting on send/recv", OKABE_ITO["reddish purple"], "xx"),
    "bookkeeping_s": ("bookkeeping", OKABE_ITO["bluish green"], ".."),
}
_KINDS = {
    "F": ("forward", OKABE_ITO["blue"], ""),
    "B": ("backward", OKABE_ITO["sky blue"], "\\\\"),
    "L": ("loss", OKABE_ITO["vermillion"], ""),
    "W": ("waiting on send/recv", OKABE_ITO["reddish purple"], "xx"),
}


def _timeline(ax: Any, row: dict[str, Any]) -> None:
    seen = set()
    for rank, part in enumerate(row["breakdown"]):
        for kind, start, end in part["timeline"]:
            label, colour, hatch = _KINDS[kind]
            ax.barh(
                rank,
                end - start,
                left=start,
                color=colour,
                hatch=hatch,
                edgecolor="black",
                linewidth=0.3,
                label=None if kind in seen else label,
            )
            seen.add(kind)
    ax.set_yticks(range(row["p"]), [f"rank {r}" for r in range(row["p"])], fontsize=PROJECTOR_PT)
    ax.invert_yaxis()
    ax.set_xlabel("seconds into the step", fontsize=PROJECTOR_PT)
    ax.tick_params(axis="x", labelsize=PROJECTOR_PT)
    ax.set_title(
        f"p = {row['p']}, m = {row['m']}, {row['mode']} ({row['schedule']}): the fastest step", fontsize=PROJECTOR_PT
    )
    ax.legend(fontsize=PROJECTOR_PT, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)


def _breakdown(ax: Any, rows: list[dict[str, Any]]) -> None:
    """Per row, each part's share of the ranks' time (p ranks times the step)."""
    labels = [f"{r['p']}/{r['m']}\n{r['mode'][:5]}" for r in rows]
    bottom = [0.0] * len(rows)
    for key, (label, colour, hatch) in PARTS.items():
        share = [sum(rank[key] for rank in r["breakdown"]) / (r["p"] * r["pipeline_s"]) for r in rows]
        ax.bar(
            range(len(rows)),
            share,
            bottom=bottom,
            color=colour,
            hatch=hatch,
            edgecolor="black",
            linewidth=0.3,
            label=label,
        )
        bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    ax.plot(range(len(rows)), [r["of_limit"] for r in rows], "kD", label="of limit (speedup / limit)")
    ax.set_xticks(range(len(rows)), labels, fontsize=PROJECTOR_PT)
    ax.set_xlabel("p / m, mode", fontsize=PROJECTOR_PT)
    ax.set_ylabel("share of rank time", fontsize=PROJECTOR_PT)
    ax.tick_params(labelsize=PROJECTOR_PT)
    ax.legend(fontsize=PROJECTOR_PT, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)


def draw_bench(result: dict[str, Any], row: tuple[int, int, str] = (2, 8, "training")) -> Any:
    """Top: the timeline of ``row`` (p, m, mode); bottom: every row's breakdown."""
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(MAX_WIDTH_IN, 11), height_ratios=[1, 1.4])
    chosen = [r for r in result["rows"] if (r["p"], r["m"], r["mode"]) == row] or result["rows"][:1]
    _timeline(top, chosen[0])
    _breakdown(bottom, result["rows"])
    fig.tight_layout()
    return fig
