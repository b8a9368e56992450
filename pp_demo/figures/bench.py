"""The benchmark's figure: one training step's timeline, every row's breakdown, and per m
pp_demo's training step beside ColossalAI's, with the two limits as times.

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
_OUTLINE = {"edgecolor": "black", "linewidth": 0.3}  # every part's box, in the timeline and the breakdown


def _timeline(ax: Any, row: dict[str, Any]) -> None:
    seen = set()
    for rank, part in enumerate(row["breakdown"]):
        for kind, start, end in part["timeline"]:
            name, colour, hatch = _KINDS[kind]
            label = None if kind in seen else name  # each kind once in the key
            ax.barh(rank, end - start, left=start, color=colour, hatch=hatch, label=label, **_OUTLINE)
            seen.add(kind)
    ax.set_yticks(range(row["p"]), [f"rank {r}" for r in range(row["p"])], fontsize=PROJECTOR_PT)
    ax.invert_yaxis()
    ax.set_xlabel("seconds into the step", fontsize=PROJECTOR_PT)
    ax.tick_params(axis="x", labelsize=PROJECTOR_PT)
    title = f"p = {row['p']}, m = {row['m']}, {row['mode']} ({row['schedule']}): the fastest step"
    ax.set_title(title, fontsize=PROJECTOR_PT)
    ax.legend(fontsize=PROJECTOR_PT, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)


def _breakdown(ax: Any, rows: list[dict[str, Any]]) -> None:
    """Per row, each part's share of the ranks' time (p ranks times the step)."""
    labels = [f"{r['p']}/{r['m']}\n{r['mode'][:5]}" for r in rows]
    bottom = [0.0] * len(rows)
    for key, (label, colour, hatch) in PARTS.items():
        share = [sum(rank[key] for rank in r["breakdown"]) / (r["p"] * r["pipeline_s"]) for r in rows]
        ax.bar(range(len(rows)), share, bottom=bottom, color=colour, hatch=hatch, label=label, **_OUTLINE)
        bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    ax.plot(range(len(rows)), [r["of_limit"] for r in rows], "kD", label="of limit (speedup / limit)")
    ax.set_xticks(range(len(rows)), labels, fontsize=PROJECTOR_PT)
    ax.set_xlabel("p / m, mode", fontsize=PROJECTOR_PT)
    ax.set_ylabel("share of rank time", fontsize=PROJECTOR_PT)
    ax.tick_params(labelsize=PROJECTOR_PT)
    ax.legend(fontsize=PROJECTOR_PT, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)


def _engines(ax: Any, result: dict[str, Any]) -> None:
    """Per m (p = 2, a training step): pp_demo's time and ColossalAI's, and the limits as times:
    the best one-process run over the limit speedup, and the micro-batches in turn over it."""
    from pp_demo.records.bench import micro_batch

    peers = result.get("peers") or []
    ours = [next(r for r in result["rows"] if (r["p"], r["m"], r["mode"]) == (2, p["m"], p["mode"])) for p in peers]
    x = range(len(peers))
    for shift, key, label, colour, hatch in (
        (-0.2, "pp_demo_s", "pp_demo (torch pipelining)", OKABE_ITO["blue"], ""),
        (0.2, "colossalai_s", "ColossalAI's plugin", OKABE_ITO["orange"], "//"),
    ):
        heights = [p[key] for p in peers]
        ax.bar([k + shift for k in x], heights, 0.4, color=colour, hatch=hatch, edgecolor="black", label=label)
    # each limit a line across its m's pair of bars: the time a step would take at it
    for times, style, label in (
        ([r["baseline_s"] / r["limit"] for r in ours], "--", "limit"),
        ([micro_batch(result, r)["micro_batch_limit_s"] for r in ours], ":", "micro-batch limit"),
    ):
        ax.hlines(times, [k - 0.45 for k in x], [k + 0.45 for k in x], colors="black", linestyles=style, linewidth=3)
        ax.plot([], [], "k" + style, linewidth=3, label=label)
    ax.set_xticks(x, [f"m = {p['m']}" for p in peers], fontsize=PROJECTOR_PT)
    ax.set_ylabel("seconds per step", fontsize=PROJECTOR_PT)
    ax.tick_params(labelsize=PROJECTOR_PT)
    ax.set_title("p = 2, a training step: pp_demo beside ColossalAI", fontsize=PROJECTOR_PT)
    ax.legend(fontsize=PROJECTOR_PT, ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)


def draw_bench(result: dict[str, Any], row: tuple[int, int, str] = (2, 8, "training")) -> Any:
    """Top: the timeline of ``row`` (p, m, mode); middle: every row's breakdown; bottom, where the
    file has ColossalAI's rows: per m, both engines' step and the limits (``_engines``)."""
    import matplotlib.pyplot as plt

    peers = bool(result.get("peers"))
    heights = [1, 1.4, 1.2] if peers else [1, 1.4]
    fig, axes = plt.subplots(len(heights), 1, figsize=(MAX_WIDTH_IN, 5 * len(heights) + 1), height_ratios=heights)
    chosen = [r for r in result["rows"] if (r["p"], r["m"], r["mode"]) == row] or result["rows"][:1]
    _timeline(axes[0], chosen[0])
    _breakdown(axes[1], result["rows"])
    if peers:
        _engines(axes[2], result)
    fig.tight_layout()
    return fig
