"""Figures drawn with matplotlib. Each returns the ``Figure`` so notebooks show it and
scripts can ``savefig`` it; none calls ``plt.show``."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from pp_demo.core import PaddingCase
from pp_demo.figures.palette import (
    MAX_HEIGHT_IN,
    MAX_WIDTH_IN,
    NO_ANSWER_COLOUR,
    OKABE_ITO,
    PAD_ID_REAL,
    PAD_SHADE,
    PROJECTOR_PT,
    RIGHT_COLOUR,
    WRONG_COLOUR,
    text_inches,
    verdict_colour,
)
from pp_demo.pooling.packed import class_grid
from pp_demo.pooling.padding_table import (
    NO_ANSWER,
    REFERENCES,
    RIGHT,
    WRONG,
    Verdict,
    mark,
    padding_table,
    resolve_cases,
)
from pp_demo.pooling.positions import pooled_positions

__all__ = ["draw_padding_table", "draw_pad_eos_rows", "draw_row_diffs", "draw_class_grid", "NO_ANSWER_LABEL"]

NO_ANSWER_LABEL = f"{NO_ANSWER} no real token to find"
"""The key's line for a verdict with nothing to be right about: the printed tables' mark and words."""

if TYPE_CHECKING:  # for annotations only: training pulls in transformers
    import torch

    from pp_demo.verify.compare import RowComparison


def verdict_text(raw: int, lands_on: int, right: bool | None) -> str:
    """``✓ 5``, ``✗ 2``, or ``✓ -1 → 5`` where a raw -1 is read as the last position; where there
    is nothing to be right about, the printed tables' mark ``NO_ANSWER`` with the position in
    brackets (``- (-1 → 5)``), so a minus sign never stands next to the mark."""
    where = f"{raw}" if raw == lands_on else f"{raw} → {lands_on}"
    return f"{NO_ANSWER} ({where})" if right is None else f"{mark(right)} {where}"


def verdict_label(ax: Any, x: float, y: float, text: str, colour: str, ha: str = "center", va: str = "center") -> None:
    """A text that carries a verdict (its mark and position): bold, found by the tests by its gid."""
    ax.text(x, y, text, ha=ha, va=va, fontsize=PROJECTOR_PT, color=colour, weight="bold", gid="verdict")


def token_squares(ax: Any, ids: Sequence[int], mask: Sequence[int], y: float, pad_token_id: int) -> None:
    """One row of tokens as squares from height ``y``: padding shaded, a real token carrying the pad id blue."""
    for k, (token, real) in enumerate(zip(ids, mask, strict=True)):
        fill = PAD_SHADE if not real else (PAD_ID_REAL if token == pad_token_id else "white")
        ax.add_patch(Rectangle((k, y), 1, 1, facecolor=fill, edgecolor="#999999", linewidth=0.5))
        ax.text(k + 0.5, y + 0.5, str(token), ha="center", va="center", fontsize=PROJECTOR_PT)


def token_key() -> list[Patch]:
    """The key to ``token_squares``."""
    return [
        Patch(facecolor=PAD_SHADE, edgecolor="#999999", label="padding (mask 0)"),
        Patch(facecolor=PAD_ID_REAL, edgecolor="#999999", label="real token = pad id"),
    ]


def _draw_blocks(
    rows: Sequence[tuple[Sequence[int], Sequence[int]]],
    rules: Sequence[str],
    verdicts: Sequence[Sequence[tuple[int, int, bool | None]]],
    pad_token_id: int,
    row_labels: Sequence[str],
    heading: str,
) -> Figure:
    """The grid both padding figures share: one panel per rule, one line per row, the panels
    side by side as far as ``MAX_WIDTH_IN`` allows (the row names left of the first column only),
    so that the figure stays within ``MAX_HEIGHT_IN``.

    ``rows`` holds ``(input_ids, attention_mask)`` lists, ``verdicts[i][j]`` the
    ``(raw position, lands_on, right)`` of rule ``j`` on row ``i`` (``right`` None: no
    answer). Each pooled square is outlined, and beside the row its mark and raw position
    are written, so no verdict is told by colour alone."""
    length = max(len(ids) for ids, _ in rows)
    texts = [verdict_text(*v) for row in verdicts for v in row]
    verdict_in = max(text_inches(t, weight="bold") for t in texts) + 0.3
    label_in = max(text_inches(label) for label in row_labels) + 0.3
    key = [
        Patch(facecolor="white", edgecolor=RIGHT_COLOUR, linewidth=3, label=f"{RIGHT} pooled, right"),
        Patch(facecolor="white", edgecolor=WRONG_COLOUR, linewidth=3, label=f"{WRONG} pooled, wrong"),
        *token_key(),
    ]
    if any(v[2] is None for row in verdicts for v in row):
        key.append(Patch(facecolor="white", edgecolor=NO_ANSWER_COLOUR, linewidth=3, label=NO_ANSWER_LABEL))
    key_in = 0.32 * -(-len(key) // 2) + 0.15  # two entries a line
    unit = 0.42  # inches per square: a two-digit id at PROJECTOR_PT (15 pt wide) fits inside, down to 0.28
    while True:
        panel_units = length + 0.3 + verdict_in / unit  # the squares, then the verdict beside them
        n_columns = max(1, min(len(rules), int((MAX_WIDTH_IN - label_in) // (unit * panel_units))))
        n_lines = -(-len(rules) // n_columns)
        inches = label_in + unit * panel_units * n_columns
        panel_in = unit * (len(rows) + 1.2)
        lines = textwrap.fill(heading, int(inches * 72 / (0.55 * PROJECTOR_PT)))
        title_in = 0.3 * (lines.count("\n") + 1) + 0.15
        # the key, one entry a line, in the last line's empty panel slot where there is one
        in_slot = n_lines * n_columns > len(rules) and 0.32 * len(key) + 0.15 <= panel_in
        height = title_in + panel_in * n_lines + (0 if in_slot else key_in)
        if height <= MAX_HEIGHT_IN or unit <= 0.28:
            break
        unit -= 0.02
    fig = plt.figure(figsize=(inches, height))
    for j, rule in enumerate(rules):
        line, column = divmod(j, n_columns)
        left = label_in + column * unit * panel_units
        top = height - title_in - line * panel_in
        ax = fig.add_axes((left / inches, (top - panel_in) / height, unit * panel_units / inches, panel_in / height))
        for i, (ids, mask) in enumerate(rows):
            raw, lands_on, right = verdicts[i][j]
            token_squares(ax, ids, mask, -i, pad_token_id)
            colour = verdict_colour(right)
            ax.add_patch(Rectangle((lands_on, -i), 1, 1, fill=False, edgecolor=colour, linewidth=3))
            verdict_label(ax, length + 0.3, -i + 0.5, verdict_text(raw, lands_on, right), colour, ha="left")
            if column == 0:
                ax.text(-0.3, -i + 0.5, row_labels[i], ha="right", va="center", fontsize=PROJECTOR_PT)
        ax.text(0, 1.15, rule, fontsize=PROJECTOR_PT, weight="bold", ha="left", va="bottom")
        ax.set_xlim(0, panel_units)
        ax.set_ylim(-len(rows) + 0.8, 2.0)
        ax.axis("off")
    fig.suptitle(lines, fontsize=PROJECTOR_PT, y=1 - 0.1 / height, va="top")
    if in_slot:
        slot_left = label_in + (len(rules) % n_columns) * unit * panel_units
        slot_top = height - title_in - (n_lines - 1) * panel_in
        where: dict[str, Any] = {
            "loc": "upper left",
            "ncol": 1,
            "bbox_to_anchor": (slot_left / inches, slot_top / height),
        }
    else:
        where = {"loc": "lower center", "ncol": 2, "bbox_to_anchor": (0.5, 0)}
    fig.legend(handles=key, fontsize=PROJECTOR_PT, frameon=False, **where)
    return fig


def draw_padding_table(
    rules: Sequence[str] | None = None,
    cases: Sequence[str | PaddingCase] | None = None,
    reference: str = "true_last",
    pad_token_id: int = 0,
) -> Figure:
    """Tokens as a grid (one row per case, one block per rule), pads shaded, each rule's
    pooled position outlined and marked right or wrong against ``reference`` (no answer
    on the all-pad row judged by the true last token), with the raw position it returns.
    ``cases`` may hold your own ``PaddingCase``, of any length."""
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
    ids, mask = input_ids.tolist(), attention_mask.tolist()
    batch: dict[str, Any] = {"input_ids": input_ids, "pad_token_id": pad_token_id, "attention_mask": attention_mask}
    pooled = {rule: pooled_positions(rule, **batch).tolist() for rule in rules}
    verdicts = []
    for i, mask_row in enumerate(mask):
        last = max((k for k, m in enumerate(mask_row) if m), default=None)
        lands = [(int(pooled[rule][i]), int(pooled[rule][i]) % len(mask_row)) for rule in rules]
        verdicts.append([(raw, lands_on, None if last is None else lands_on == last) for raw, lands_on in lands])
    labels = row_labels or [f"row {i}" for i in range(len(ids))]
    heading = "pad == eos: where each rule pools, judged by the true last real token"
    return _draw_blocks(list(zip(ids, mask, strict=True)), list(rules), verdicts, pad_token_id, labels, heading)


_HATCHES = ["//", "", "..", "xx", "\\\\"]
# rules' colours, none of them a verdict's (RIGHT_COLOUR, WRONG_COLOUR)
RULE_COLOURS = [OKABE_ITO[name] for name in ("blue", "reddish purple", "sky blue", "orange", "black")]


def draw_row_diffs(comparisons: Mapping[tuple[str, str], RowComparison], row_labels: Sequence[str]) -> Figure:
    """Per-row max |logit difference| against ``model.forward``, one panel per family, side by
    side (rows and scale shared), log scale, the tolerance dashed; ``comparisons`` maps
    ``(family, rule)`` to a ``RowComparison``. Each bar bears its verdict mark. A log scale has no
    0: an exact 0 draws no bar, only a "0" at the floor in the rule's colour, so it never looks like
    a small measured value; every mark stays inside its panel. The rules' colours are none of the
    verdicts' (a green "0" would read as a check mark), and the key names only what is drawn: a
    rule whose differences are all 0 is keyed by its "0", not by a bar it never draws."""
    families = list(dict.fromkeys(f for f, _ in comparisons))
    rules = list(dict.fromkeys(r for _, r in comparisons))
    colours = dict(zip(rules, RULE_COLOURS, strict=False))  # more styles than rules
    hatches = dict(zip(rules, _HATCHES, strict=False))
    atol = max(c.atol for c in comparisons.values())
    # the axis starts below the smallest measured difference (fp32 rounding: a few 1e-9 on the CPU)
    measured_diffs = [d for c in comparisons.values() for d in c.max_abs_diff if d > 0]
    floor = min([atol / 100, *measured_diffs]) / 3
    top = max(max(c.max_abs_diff) for c in comparisons.values())
    tick_in = max(text_inches(label) for label in row_labels)  # the row names, written upright
    size = (MAX_WIDTH_IN, min(MAX_HEIGHT_IN, 4.2 + tick_in))
    fig, axes = plt.subplots(
        1, len(families), figsize=size, sharex=True, sharey=True, squeeze=False, layout="constrained"
    )
    width = 0.8 / len(rules)
    for ax, family in zip(axes[0], families, strict=True):
        for j, rule in enumerate(rules):
            result = comparisons[family, rule]
            xs = [i + (j - (len(rules) - 1) / 2) * width for i in range(len(result.max_abs_diff))]
            measured = [(x, d) for x, d in zip(xs, result.max_abs_diff, strict=True) if d > 0]
            style = {"color": colours[rule], "hatch": hatches[rule], "edgecolor": "black", "linewidth": 0.5}
            ax.bar([x for x, _ in measured], [d for _, d in measured], width, label=f"rule {rule}", **style)
            for x, d, ok in zip(xs, result.max_abs_diff, result.matches, strict=True):
                if d == 0:  # exactly model.forward's logits
                    ax.text(x, floor, "0", ha="center", va="bottom", fontsize=PROJECTOR_PT, color=colours[rule])
                verdict_label(ax, x, (d or floor * 10) * 1.5, mark(ok), verdict_colour(ok), va="bottom")
        ax.axhline(atol, color="black", linestyle="--", linewidth=1.2, label=f"tolerance {atol:g}")
        ax.set_yscale("log")
        ax.set_ylim(floor, max(top, atol) * 300)  # room above the tallest bar for its mark
        ax.set_xlim(-0.5, len(row_labels) - 0.5)  # every row's slot, a bar drawn there or not
        ax.set_title(family, fontsize=PROJECTOR_PT, loc="left", weight="bold")
        ax.tick_params(labelsize=PROJECTOR_PT)
        ax.set_xticks(range(len(row_labels)), row_labels, rotation=90, fontsize=PROJECTOR_PT)
    fig.supylabel("largest logit difference\nfrom model.forward (log scale)", fontsize=PROJECTOR_PT)
    # the key: each rule as it is drawn (its bar where one is, its "0" where a row is exact), the
    # tolerance line, then only the verdict marks that occur
    results = list(comparisons.values())
    key: list[Any] = []
    for rule in rules:
        drawn = [d for family in families for d in comparisons[family, rule].max_abs_diff]
        parts: list[Any] = [
            Patch(facecolor=colours[rule], hatch=hatches[rule], edgecolor="black", linewidth=0.5)
        ] * any(drawn)
        parts += [Line2D([], [], linestyle="none", marker="$0$", markersize=10, color=colours[rule])] * (0 in drawn)
        key.append((tuple(parts), f"rule {rule}" + (": 0 where exact" if 0 in drawn else "")))
    key.append((Line2D([], [], color="black", linestyle="--", linewidth=1.2), f"tolerance {atol:g}"))
    for sign, ok, words in ((RIGHT, True, f"within {atol:g} of model.forward"), (WRONG, False, "not within")):
        if any(m == ok for c in results for m in c.matches):
            key.append(
                (Line2D([], [], linestyle="none", marker=f"${sign}$", markersize=10, color=verdict_colour(ok)), words)
            )
    fig.legend(
        [handle for handle, _ in key],
        [label for _, label in key],
        handler_map={tuple: HandlerTuple(ndivide=None)},
        loc="outside upper center",
        ncol=2,
        fontsize=PROJECTOR_PT,
        frameon=False,
    )
    return fig


_GRID_FILL = {"right": RIGHT_COLOUR, "wrong": WRONG_COLOUR, "no answer": NO_ANSWER_COLOUR, "cannot run": "white"}


def _grid_cell_text(verdict: Verdict) -> str:
    """``✓ 3``, ``✗ 2,3,7``; ``- (-1)`` where there is no real token (the printed tables' mark,
    the position in brackets: never ``- -1``); blank where the rule cannot run (hatched instead)."""
    if verdict.positions is None:
        return ""
    where = ",".join(map(str, verdict.positions))
    return f"{NO_ANSWER} ({where})" if verdict.right is None else f"{verdict.mark} {where}"


def draw_class_grid(grid: list[list[Verdict]] | None = None) -> Figure:
    """Rule x case, each cell filled by whether the rule finds the true last real token and
    marked so (right, wrong, ``NO_ANSWER``: no real token; white and hatched when the rule cannot run
    on that kind of batch), followed by the raw position(s) it returns. ``grid`` is
    ``pp_demo.pooling.packed.class_grid()``'s result, computed when not given.

    Laid out in inches from the measured labels, within ``MAX_WIDTH_IN`` at ``PROJECTOR_PT``."""
    grid = grid if grid is not None else class_grid()
    cases = [v.case for v in grid[0]]
    row_labels = [f"({row[0].rule_class}) {row[0].rule}" for row in grid]
    cells = [[_grid_cell_text(v) for v in row] for row in grid]
    label_in = max(text_inches(label) for label in row_labels) + 0.3  # the gap, and the renderer's rounding
    widest_cell = max(text_inches(text, weight="bold") for row in cells for text in row)
    cell_w = max(widest_cell + 0.14, 0.6)
    # the case names lean at 30 degrees (flatter than 45: the grid stays within MAX_HEIGHT_IN);
    # the last one leans out past the grid from its cell's middle
    lean = math.radians(30)
    right_in = max(0.15, text_inches(cases[-1]) * math.cos(lean) - cell_w / 2 + 0.2)
    cell_w = min(cell_w, (MAX_WIDTH_IN - label_in - right_in) / len(cases))
    cell_h = 0.33  # a bold mark and position at PROJECTOR_PT is 0.2 inches tall
    header_in = 0.15 + max(text_inches(case) for case in cases) * math.sin(lean)
    title_in, key_in = 0.65, 0.8  # two lines each
    width = label_in + cell_w * len(cases) + right_in
    height = title_in + header_in + cell_h * len(grid) + key_in
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((label_in / width, key_in / height, cell_w * len(cases) / width, cell_h * len(grid) / height))
    for i, (row, texts) in enumerate(zip(grid, cells, strict=True)):
        for j, (verdict, text) in enumerate(zip(row, texts, strict=True)):
            fill, hatch = _GRID_FILL[verdict.status], "//" if verdict.status == "cannot run" else None
            ax.add_patch(Rectangle((j, -i), 1, 1, facecolor=fill, hatch=hatch, edgecolor="#999999", linewidth=0.5))
            colour = "white" if verdict.status in ("right", "wrong") else "black"
            verdict_label(ax, j + 0.5, -i + 0.5, text, colour)
        ax.text(-0.1, -i + 0.5, row_labels[i], ha="right", va="center", fontsize=PROJECTOR_PT)
    for j, case in enumerate(cases):
        ax.text(j + 0.5, 1.15, case, ha="left", va="bottom", rotation=30, rotation_mode="anchor", fontsize=PROJECTOR_PT)
    ax.set_xlim(0, len(cases))
    ax.set_ylim(-len(grid) + 1, 1)
    ax.axis("off")
    title = "Which rule finds the last real token?\ncell: verdict, then the raw position (-1 reads the last)"
    fig.suptitle(title, fontsize=PROJECTOR_PT, y=1 - 0.1 / height, va="top")
    key = [
        Patch(facecolor=RIGHT_COLOUR, edgecolor="#999999", label=f"{RIGHT} right: finds the last real token"),
        Patch(facecolor=WRONG_COLOUR, edgecolor="#999999", label=f"{WRONG} wrong"),
        Patch(facecolor=NO_ANSWER_COLOUR, edgecolor="#999999", label=NO_ANSWER_LABEL),
        Patch(facecolor="white", hatch="//", edgecolor="#999999", label="hatched: cannot run on this batch"),
    ]
    fig.legend(
        handles=key, loc="lower center", ncol=2, fontsize=PROJECTOR_PT, frameon=False,
        bbox_to_anchor=(0.5, 0.05 / height),
    )  # fmt: skip
    return fig
