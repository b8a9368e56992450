"""The review table as one picture: each padded row once, one column of verdicts per rule.

``draw_padding_table`` outlines each rule's pooled square, one panel per rule: clear for two
rows, five copies of the same rows for the review table. Here each row is drawn once, with
its positions numbered above, and beside it one cell per rule: the mark and the raw position
it returns (``✗ 3``, ``✓ -1 → 5``), so the whole table fits one projector screen.
"""

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pp_demo.figures.palette import PROJECTOR_PT, RIGHT_COLOUR, WRONG_COLOUR, verdict_colour
from pp_demo.figures.pooling import token_key, token_squares, verdict_label, verdict_text
from pp_demo.pooling.padding_table import REFERENCES, RIGHT, WRONG, padding_table, resolve_cases

__all__ = ["draw_review_grid"]

_UNIT = 0.42  # inches per token square
_COLUMN = 1.4  # inches per rule column: "✓ -1 → 5" at PROJECTOR_PT


def _header(rule: str) -> str:
    """A rule name on two lines where it is long, as the printed table wraps it."""
    if len(rule) <= 9 or "_" not in rule:
        return rule
    head, _, tail = rule.partition("_")
    return f"{head}\n_{tail}"


def draw_review_grid(
    cases: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    reference: str = "true_last",
    pad_token_id: int = 0,
) -> Figure:
    """Rows as token squares (padding grey, a real token carrying the pad id blue), then each
    rule's verdict on that row against ``reference``: one axes, one picture."""
    resolved = resolve_cases(cases)
    table = padding_table(rules, resolved, reference, pad_token_id)
    names = [cell.rule for cell in table[0]]
    length = max(case.length for case in resolved)
    width_data = length + (len(names) * _COLUMN) / _UNIT + 0.6
    columns = [length + 0.6 + (j + 0.5) * _COLUMN / _UNIT for j in range(len(names))]  # each rule's middle
    height = _UNIT * (len(resolved) * 1.25 + 1.9) + 1.1
    fig = plt.figure(figsize=(width_data * _UNIT, height))
    ax = fig.add_axes((0, 1.0 / height, 1, 1 - 1.6 / height))
    for i, (case, row) in enumerate(zip(resolved, table, strict=True)):
        y = -i * 1.25
        token_squares(ax, case.input_ids, case.attention_mask, y, pad_token_id)
        for x, cell in zip(columns, row, strict=True):
            text = verdict_text(cell.position, cell.lands_on, cell.right)
            verdict_label(ax, x, y + 0.5, text, verdict_colour(cell.right))
    top = 1.15
    for k in range(length):
        ax.text(k + 0.5, top + 0.1, str(k), ha="center", va="bottom", fontsize=PROJECTOR_PT, color="#555555")
    for x, rule in zip(columns, names, strict=True):
        ax.text(x, top + 0.1, _header(rule), ha="center", va="bottom", fontsize=PROJECTOR_PT, weight="bold")
    ax.set_xlim(-0.1, width_data)
    ax.set_ylim(-(len(resolved) - 1) * 1.25 - 0.2, top + 1.7)
    ax.axis("off")
    fig.suptitle(f"judged by {REFERENCES[reference]}", fontsize=PROJECTOR_PT, y=0.995, va="top")
    key = [
        *token_key(),
        Patch(facecolor=RIGHT_COLOUR, label=f"{RIGHT} right"),
        Patch(facecolor=WRONG_COLOUR, label=f"{WRONG} wrong"),
    ]
    fig.legend(handles=key, loc="lower center", ncol=4, fontsize=PROJECTOR_PT, frameon=False)
    return fig
