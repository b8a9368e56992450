"""Figures drawn with matplotlib. Each returns the ``Figure`` so notebooks show it and
scripts can ``savefig`` it; none calls ``plt.show``."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pp_demo.figures.palette import (
    MIN_FONT_PT,
    NO_ANSWER_COLOUR,
    PAD_ID_REAL,
    PAD_SHADE,
    RIGHT_COLOUR,
    SERIES,
    WRONG_COLOUR,
)
from pp_demo.pooling.packed import class_grid
from pp_demo.pooling.padding_table import NO_ANSWER, REFERENCES, RIGHT, WRONG, mark, padding_table, resolve_cases

__all__ = ["draw_padding_table", "draw_pad_eos_rows", "draw_row_diffs", "draw_class_grid"]

if TYPE_CHECKING:  # for annotations only: training pulls in transformers
    import torch

    from pp_demo.pooling.cases import PaddingCase
    from pp_demo.pooling.padding_table import Verdict
    from pp_demo.verify.compare import RowComparison


_RIGHT, _WRONG = RIGHT_COLOUR, WRONG_COLOUR  # the names the sections below use
_UNIT = 0.34  # inches per grid square: a two-digit id at MIN_FONT_PT fits inside
_VERDICT = "verdict"  # gid of every text that carries a right/wrong mark (the tests find them by it)


def _colour(right: bool | None) -> str:
    return NO_ANSWER_COLOUR if right is None else (RIGHT_COLOUR if right else WRONG_COLOUR)


def _draw_blocks(
    rows: Sequence[tuple[Sequence[int], Sequence[int]]],
    rules: Sequence[str],
    verdicts: Sequence[Sequence[tuple[int, int, bool | None]]],
    pad_token_id: int,
    row_labels: Sequence[str],
    heading: str,
) -> Figure:
    """The grid both padding figures share: one block of squares per rule, one line per row.

    ``rows`` holds ``(input_ids, attention_mask)`` lists, ``verdicts[i][j]`` the
    ``(raw position, lands_on, right)`` of rule ``j`` on row ``i`` (``right`` None: no
    answer). Each pooled square is outlined, and beside the block its mark and raw
    position are written, so no verdict is told by colour alone."""
    length = max(len(ids) for ids, _ in rows)
    width = length + 3  # the block, then room for "✗ -1"
    left = 0.26 * max(len(label) for label in row_labels) + 0.6
    inches = _UNIT * (width * len(rules) + left)
    fig, ax = plt.subplots(figsize=(inches, _UNIT * (len(rows) + 6.5)))
    for i, (ids, mask) in enumerate(rows):
        for j, (raw, lands_on, right) in enumerate(verdicts[i]):
            x0 = j * width
            for k, (token, real) in enumerate(zip(ids, mask, strict=True)):
                fill = PAD_SHADE if not real else (PAD_ID_REAL if token == pad_token_id else "white")
                ax.add_patch(Rectangle((x0 + k, -i), 1, 1, facecolor=fill, edgecolor="#999999", linewidth=0.5))
                ax.text(x0 + k + 0.5, -i + 0.5, str(token), ha="center", va="center", fontsize=MIN_FONT_PT)
            ax.add_patch(Rectangle((x0 + lands_on, -i), 1, 1, fill=False, edgecolor=_colour(right), linewidth=2.6))
            ax.text(
                x0 + len(ids) + 0.2,
                -i + 0.5,
                f"{mark(right)} {raw}",
                ha="left",
                va="center",
                fontsize=MIN_FONT_PT,
                color=_colour(right),
                weight="bold",
                gid=_VERDICT,
            )
    for j, rule in enumerate(rules):
        ax.text(j * width + length / 2, 1.2, rule, ha="center", va="bottom", fontsize=MIN_FONT_PT, weight="bold")
    for i, label in enumerate(row_labels):
        ax.text(-0.3, -i + 0.5, label, ha="right", va="center", fontsize=MIN_FONT_PT)
    ax.set_xlim(-left, len(rules) * width)
    ax.set_ylim(-len(rows) + 0.8, 2.4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(_title(heading, inches), fontsize=MIN_FONT_PT)
    fig.tight_layout()
    return fig


_KEY = (
    f"outlined: where each rule pools;  {RIGHT} right  {WRONG} wrong  {NO_ANSWER} no real token;",
    "beside it: the raw position the rule returns (-1 reads the last);",
    "grey: padding (mask 0);  blue: a real token that carries the pad id",
)


def _title(first_line: str, inches: float) -> str:
    """The title and the key, wrapped to the figure's width at MIN_FONT_PT."""
    chars = max(40, int(inches * 72 / (0.6 * MIN_FONT_PT)))
    return "\n".join(textwrap.fill(line, chars) for line in (first_line, *_KEY))


def draw_padding_table(
    rules: Sequence[str] | None = None,
    cases: Sequence[str | PaddingCase] | None = None,
    reference: str = "true_last",
    pad_token_id: int = 0,
) -> Figure:
    """Tokens as a grid (one row per case, one block per rule), pads shaded, each rule's
    pooled position outlined and marked right or wrong against ``reference`` (no answer
    on the all-pad row judged by the true last token), with the raw position it returns.
    ``cases`` may hold ``PaddingCase`` objects of your own, of any length."""
    cases = resolve_cases(cases)
    table = padding_table(rules, cases, reference, pad_token_id)
    rules = [cell.rule for cell in table[0]]
    rows = [(case.input_ids, case.attention_mask) for case in cases]
    verdicts = [[(cell.position, cell.lands_on, cell.right) for cell in row] for row in table]
    heading = f"pooled position per rule, judged by {REFERENCES[reference]}"
    return _draw_blocks(rows, rules, verdicts, pad_token_id, [row[0].case for row in table], heading)


def draw_pad_eos_rows(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    pad_token_id: int,
    row_labels: Sequence[str] | None = None,
    rules: Sequence[str] = ("rightmost_non_pad", "rightmost_attended"),
) -> Figure:
    """A pad == eos batch as a grid: the real tokens that carry the pad id stand out from
    the padding, and each rule's pooled position is marked against the true last real
    token, read from the attention mask in plain Python (no rule judges itself)."""
    from pp_demo.pooling.rules import pooled_positions

    ids, mask = input_ids.tolist(), attention_mask.tolist()
    pooled = {
        rule: pooled_positions(
            rule, input_ids=input_ids, pad_token_id=pad_token_id, attention_mask=attention_mask
        ).tolist()
        for rule in rules
    }
    verdicts = []
    for i, mask_row in enumerate(mask):
        last = max((k for k, m in enumerate(mask_row) if m), default=None)
        cells = []
        for rule in rules:
            raw = int(pooled[rule][i])
            lands_on = raw % len(mask_row)
            cells.append((raw, lands_on, None if last is None else lands_on == last))
        verdicts.append(cells)
    labels = row_labels or [f"row {i}" for i in range(len(ids))]
    heading = "pad == eos: where each rule pools, judged by the true last real token"
    return _draw_blocks(list(zip(ids, mask, strict=True)), list(rules), verdicts, pad_token_id, labels, heading)


_HATCHES = ["//", "", "..", "xx", "\\\\"]


def draw_row_diffs(comparisons: Mapping[tuple[str, str], RowComparison], row_labels: Sequence[str]) -> Figure:
    """Per-row max |logit difference| against ``model.forward``, one panel per family, on
    a log scale with the tolerance as a dashed line. Every bar carries its verdict mark
    (within the tolerance or not); a difference of exactly 0 is drawn at a floor below the
    tolerance, since a log scale has no 0.

    ``comparisons`` maps ``(family, rule)`` to a ``RowComparison``."""
    families = list(dict.fromkeys(f for f, _ in comparisons))
    rules = list(dict.fromkeys(r for _, r in comparisons))
    colours, hatches = (
        dict(zip(rules, SERIES, strict=False)),
        dict(zip(rules, _HATCHES, strict=False)),
    )  # more styles than rules
    atol = max(c.atol for c in comparisons.values())
    floor = atol / 100
    top = max(max(c.max_abs_diff) for c in comparisons.values())
    fig, axes = plt.subplots(1, len(families), figsize=(4.2 * len(families), 4.4), sharey=True, squeeze=False)
    width = 0.8 / len(rules)
    for ax, family in zip(axes[0], families, strict=True):
        for j, rule in enumerate(rules):
            result = comparisons[family, rule]
            xs = [i + (j - (len(rules) - 1) / 2) * width for i in range(len(result.max_abs_diff))]
            heights = [max(d, floor) for d in result.max_abs_diff]
            ax.bar(
                xs,
                heights,
                width,
                color=colours[rule],
                hatch=hatches[rule],
                edgecolor="black",
                linewidth=0.5,
                label=rule,
            )
            for x, h, ok in zip(xs, heights, result.matches, strict=True):
                ax.text(
                    x,
                    h * 1.5,
                    mark(ok),
                    ha="center",
                    va="bottom",
                    fontsize=MIN_FONT_PT,
                    color=_colour(ok),
                    weight="bold",
                    gid=_VERDICT,
                )
        ax.axhline(atol, color="black", linestyle="--", linewidth=1.2, label=f"tolerance {atol:g}")
        ax.set_yscale("log")
        ax.set_ylim(floor / 3, max(top, atol) * 60)
        ax.set_xticks(range(len(row_labels)), row_labels, rotation=30, ha="right", fontsize=MIN_FONT_PT)
        ax.tick_params(axis="y", labelsize=MIN_FONT_PT)
        ax.set_title(family, fontsize=MIN_FONT_PT)
    axes[0][0].set_ylabel(f"max |logit diff| vs model.forward\n(log scale; 0 drawn at {floor:g})", fontsize=MIN_FONT_PT)
    axes[0][-1].legend(fontsize=MIN_FONT_PT, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"{RIGHT} within the tolerance of model.forward   {WRONG} not", fontsize=MIN_FONT_PT)
    fig.tight_layout()
    return fig


_GRID_FILL = {"right": _RIGHT, "wrong": _WRONG, "no answer": NO_ANSWER_COLOUR, "cannot run": "white"}


def draw_class_grid(grid: list[list[Verdict]] | None = None) -> Figure:
    """Rule x case, each cell filled by whether the rule finds the true last real token
    and marked so (right, wrong, no real token; white with a hatch when the rule cannot
    run on that kind of batch), followed by the raw position(s) it returns.
    ``grid`` is ``pp_demo.pooling.packed.class_grid()``'s result, computed when not given."""
    grid = grid if grid is not None else class_grid()
    cases = [v.case for v in grid[0]]
    unit = 0.62  # inches per cell: "✓ 2,3,7" at MIN_FONT_PT fits
    fig, ax = plt.subplots(figsize=(unit * (len(cases) + 6.5), unit * (len(grid) + 3.6)))
    for i, row in enumerate(grid):
        for j, verdict in enumerate(row):
            hatch = "//" if verdict.status == "cannot run" else None
            ax.add_patch(
                Rectangle(
                    (j, -i), 1, 1, facecolor=_GRID_FILL[verdict.status], hatch=hatch, edgecolor="#999999", linewidth=0.5
                )
            )
            label = "n/a" if verdict.positions is None else ",".join(map(str, verdict.positions))
            colour = "white" if verdict.status in ("right", "wrong") else "black"
            ax.text(
                j + 0.5,
                -i + 0.5,
                f"{'' if verdict.positions is None else verdict.mark} {label}".strip(),
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                color=colour,
                weight="bold",
                gid=_VERDICT,
            )
        ax.text(-0.1, -i + 0.5, f"({row[0].rule_class}) {row[0].rule}", ha="right", va="center", fontsize=MIN_FONT_PT)
    for j, case in enumerate(cases):
        ax.text(j + 0.5, 1.1, case, ha="left", va="bottom", rotation=35, fontsize=MIN_FONT_PT)
    ax.set_xlim(-5.0, len(cases) + 1.5)
    ax.set_ylim(-len(grid) + 0.9, 3.4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(
        "which rule finds the last real token (cell: mark, then the raw position returned)\n"
        f"{RIGHT} right   {WRONG} wrong   {NO_ANSWER} no real token   hatched: cannot run on this batch",
        fontsize=MIN_FONT_PT,
    )
    fig.tight_layout()
    return fig
