"""The benchmark's figure: one training step's timeline, and every row's breakdown.

Okabe-Ito colours, each part also hatched, so the figure reads in grey and for every
colour vision; text at 10 pt or more.
"""

from __future__ import annotations

from typing import Any

__all__ = ["draw_bench", "PARTS"]

# part of the breakdown -> (label, Okabe-Ito colour, hatch)
PARTS = {
    "compute_s": ("compute", "#0072B2", ""),
    "idle_s": ("idle (bubble)", "#E69F00", "//"),
    "p2p_wait_s": ("waiting on send/recv", "#CC79A7", "xx"),
    "bookkeeping_s": ("bookkeeping", "#009E73", ".."),
}
_KINDS = {
    "F": ("forward", "#0072B2", ""),
    "B": ("backward", "#56B4E9", "\\\\"),
    "L": ("loss", "#D55E00", ""),
    "W": ("waiting on send/recv", "#CC79A7", "xx"),
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
    ax.set_yticks(range(row["p"]), [f"rank {r}" for r in range(row["p"])], fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel("seconds into the step", fontsize=10)
    ax.set_title(f"p = {row['p']}, m = {row['m']}, {row['mode']} ({row['schedule']}): the fastest step", fontsize=11)
    ax.legend(fontsize=10, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)


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
    ax.set_xticks(range(len(rows)), labels, fontsize=10)
    ax.set_xlabel("p / m, mode", fontsize=10)
    ax.set_ylabel("share of rank time", fontsize=10)
    ax.tick_params(labelsize=10)
    ax.legend(fontsize=10, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)


def draw_bench(result: dict[str, Any], row: tuple[int, int, str] = (2, 8, "training")) -> Any:
    """Top: the timeline of ``row`` (p, m, mode); bottom: every row's breakdown."""
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8.5), height_ratios=[1, 1.4])
    chosen = [r for r in result["rows"] if (r["p"], r["m"], r["mode"]) == row] or result["rows"][:1]
    _timeline(top, chosen[0])
    _breakdown(bottom, result["rows"])
    fig.tight_layout()
    return fig
