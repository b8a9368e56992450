"""Figures drawn with matplotlib. Each returns the ``Figure`` so notebooks show it and
scripts can ``savefig`` it; none calls ``plt.show``."""

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from .cases import get_case
from .table import REFERENCES, padding_table

__all__ = ["draw_padding_table"]

_PAD_SHADE = "#d9d9d9"   # positions the attention mask marks as padding
_RIGHT = "#1a9850"
_WRONG = "#d73027"


def draw_padding_table(rules=None, cases=None, reference="true_last"):
    """Tokens as a grid (one row per case, one block per rule), pads shaded, each rule's
    pooled position outlined: green when it matches ``reference``, red when not, grey
    when the reference has no answer (the all-pad row judged by the true last token)."""
    table = padding_table(rules, cases, reference)
    rules = [cell.rule for cell in table[0]]
    width = max(get_case(row[0].case).length for row in table) + 1
    fig, ax = plt.subplots(figsize=(1.9 * len(rules) + 1.6, 0.48 * len(table) + 1.3))
    for i, row in enumerate(table):
        case = get_case(row[0].case)
        for j, cell in enumerate(row):
            x0 = j * width
            for k, (token, real) in enumerate(zip(case.input_ids, case.attention_mask)):
                ax.add_patch(Rectangle((x0 + k, -i), 1, 1, facecolor="white" if real else _PAD_SHADE,
                                       edgecolor="#999999", linewidth=0.5))
                ax.text(x0 + k + 0.5, -i + 0.5, str(token), ha="center", va="center", fontsize=7)
            colour = "#777777" if cell.right is None else (_RIGHT if cell.right else _WRONG)
            ax.add_patch(Rectangle((x0 + cell.lands_on, -i), 1, 1, fill=False, edgecolor=colour, linewidth=2.2))
    for j, rule in enumerate(rules):
        ax.text(j * width + (width - 1) / 2, 1.25, rule, ha="center", va="bottom", fontsize=8, weight="bold")
    for i, row in enumerate(table):
        ax.text(-0.3, -i + 0.5, row[0].case, ha="right", va="center", fontsize=8)
    ax.set_xlim(-5.5, len(rules) * width)
    ax.set_ylim(-len(table) + 0.8, 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"pooled position per rule, judged by {REFERENCES[reference]}\n"
                 "shaded: padding (mask 0)   green: right   red: wrong", fontsize=9)
    fig.tight_layout()
    return fig
