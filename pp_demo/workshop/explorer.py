"""The explorer: type a row of token ids (and its mask), see where every pooling rule lands.

No Jupyter needed: ``explore`` returns the answer as data, ``format_exploration`` as text
(``python -m pp_demo explore 0 0 5 6 7 8``), ``exploration_html`` as the HTML notebook 01's
widgets show. By default every rule that reads the ids or the mask runs (``PADDED_RULES``);
``rules=`` names fewer (notebook 01 offers the five core rules it teaches, ``CORE_RULES``).
``known_lengths`` never runs: it needs a packed batch, not a padded row.
"""

import base64
import html
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pp_demo.core import FIX, PaddingCase, get_rule
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import Verdict, judge, mark, padding_table, row_text
from pp_demo.pooling.positions import PADDED_RULES

__all__ = ["Exploration", "parse_row", "explore", "format_exploration", "exploration_html", "explorer_box"]

CASE_NAME = "your row"
FIGURE_TOKENS = 32
"""Rows up to this length are also drawn; a longer grid would be too small to read (and slow)."""


@dataclass(frozen=True)
class Exploration:
    """One typed row: the two references and, per rule, the raw position and where it lands."""

    case: PaddingCase  # true_last from the mask, forward_pools from the fix rule
    pad_token_id: int
    cells: tuple[Verdict, ...]

    @property
    def positions(self) -> dict[str, int]:
        """Raw position per rule (``-1`` stays ``-1``)."""
        return {cell.rule: cell.position for cell in self.cells}

    @property
    def lands_on(self) -> dict[str, int]:
        """Where tensor indexing reads each rule's position (``position % length``)."""
        return {cell.rule: cell.lands_on for cell in self.cells}


def parse_row(text: str, what: str = "token ids") -> tuple[int, ...]:
    """``"0 0 5 6"``, ``"0,0,5,6"`` or ``"[0, 0, 5, 6]"`` as a tuple of ints; else a
    one-line ``ValueError``."""
    items = [item for item in re.split(r"[\s,]+", text.strip().strip("[]()")) if item]
    for item in items:
        if not re.fullmatch(r"[+-]?\d+", item):
            raise BadInput(f"{what} must be whole numbers, got {item!r}")
    return tuple(int(item) for item in items)


def _as_whole_numbers(values: Iterable[Any] | str, what: str) -> tuple[int, ...]:
    if isinstance(values, str):
        return parse_row(values, what)
    if hasattr(values, "dim") and hasattr(values, "tolist"):  # a tensor: one row, of integers
        tensor: Any = values
        if tensor.dim() != 1 or tensor.is_floating_point():
            raise BadInput(
                f"{what} must be one row of whole numbers (1-D), got a {tensor.dtype} tensor of shape "
                f"{tuple(tensor.shape)}" + (" (one row of a batch: ids[0])" if tensor.dim() == 2 else "")
            )
        values = tensor.tolist()
    if not isinstance(values, Iterable):
        raise BadInput(f"{what} must be a sequence of whole numbers or a string like '0 0 5 6', got {values!r}")
    items = tuple(values)
    for value in items:
        if isinstance(value, bool) or not hasattr(value, "__index__"):  # an int (numpy's too), not a bool
            raise BadInput(f"{what} must be whole numbers, got {value!r}")
    return tuple(int(value) for value in items)


def explore(
    input_ids: Sequence[int] | str,
    attention_mask: Sequence[int] | str | None = None,
    pad_token_id: int = 0,
    rules: Sequence[str] = PADDED_RULES,
) -> Exploration:
    """Run ``rules``, in order, on one row (a batch of one); ``attention_mask`` defaults to
    all ones. The true last real token is the mask's rightmost 1 (``None`` without one);
    ``model.forward`` pools where the fix rule does."""
    names = tuple(get_rule(r).name for r in rules)
    if not names:
        raise BadInput(f"name at least one rule to explore, of {', '.join(PADDED_RULES)}")
    packed = [r for r in names if r not in PADDED_RULES]
    if packed:
        raise BadInput(
            f"rule {packed[0]!r} pools packed batches from their lengths (cu_seqlens); the explorer "
            f"takes one padded row: explore {', '.join(PADDED_RULES)}"
        )
    ids = _as_whole_numbers(input_ids, "token ids")
    mask = (1,) * len(ids) if attention_mask in (None, "") else _as_whole_numbers(attention_mask, "mask values")
    if not ids:
        raise BadInput("the row is empty: type at least one token id")
    if any(not 0 <= i < 2**63 for i in ids):  # a long tensor holds them
        raise BadInput(f"token ids must lie between 0 and 2**63 - 1, got {row_text(ids)}")
    if len(mask) != len(ids):
        raise BadInput(f"the mask has length {len(mask)} but the row has {len(ids)} token ids")
    if any(m not in (0, 1) for m in mask):
        raise BadInput(f"the mask holds only 0 (padding) and 1 (real token), got {row_text(mask)}")
    if isinstance(pad_token_id, bool) or not isinstance(pad_token_id, int) or not 0 <= pad_token_id < 2**63:
        raise BadInput(
            f"the pad id must be a whole number in 0..2**63-1 (a long tensor holds it), got {pad_token_id!r}"
        )
    last = max((k for k, m in enumerate(mask) if m), default=None)
    probe = PaddingCase(CASE_NAME, ids, mask, last, 0, "a row typed into the explorer")
    case = replace(probe, forward_pools=judge(FIX, probe, "true_last", pad_token_id).position)
    row = padding_table(names, [case], "true_last", pad_token_id)[0]
    return Exploration(case, pad_token_id, tuple(row))


def format_exploration(result: Exploration) -> str:
    """The row, its two references, and one line per rule, marked against both."""
    case = result.case
    true_last = "none (the mask has no 1)" if case.true_last is None else str(case.true_last)
    width = max(len(cell.rule) for cell in result.cells)
    lines = [
        f"row {row_text(case.input_ids)}  mask {row_text(case.attention_mask)}  pad id {result.pad_token_id}",
        f"true last real token (from the mask): {true_last}",
        f"model.forward pools (the fix, {FIX}): {case.forward_pools}",
        "",
        f"{'rule':<{width}}  pools  lands on  true last  forward",
    ]
    for cell in result.cells:
        lines.append(
            f"{cell.rule:<{width}}  {cell.position:>5}  {cell.lands_on:>8}  "
            f"{cell.mark:>9}  {mark(cell.lands_on == case.forward_pools):>7}"
        )
    return "\n".join(lines)


def exploration_html(
    input_ids: Sequence[int] | str,
    attention_mask: Sequence[int] | str | None = None,
    pad_token_id: int = 0,
    rules: Sequence[str] = PADDED_RULES,
) -> str:
    """The text table and the padding-grid figure as one HTML fragment; a bad row gives its
    one-line error instead (the widgets must never show a traceback)."""
    try:
        result = explore(input_ids, attention_mask, pad_token_id, rules)
    except ValueError as error:
        return f'<p class="pp-explore-error"><b>cannot explore this row:</b> {html.escape(str(error))}</p>'
    table = f'<pre class="pp-explore-table">{html.escape(format_exploration(result))}</pre>'
    if result.case.length > FIGURE_TOKENS:
        return table + f"<p>(rows longer than {FIGURE_TOKENS} tokens are not drawn)</p>"
    alt = (
        f"Padding grid of the row {row_text(result.case.input_ids)}: each rule's pooled position "
        f"outlined, green when it is the true last real token"
    )
    import matplotlib.pyplot as plt

    from pp_demo.figures.pooling import draw_padding_table

    fig = draw_padding_table(list(result.positions), [result.case], "true_last", result.pad_token_id)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    return table + f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}"/>'


def explorer_box(*children: Any) -> Any:
    """The explorer's widgets, stacked in an ipywidgets ``VBox`` whose plain-text form is one
    short line. A notebook stores that text beside the widget (and shows it where widgets do
    not render); a plain ``VBox`` stores 110 characters of its children's settings."""
    import ipywidgets as widgets  # type: ignore[import-untyped]

    class ExplorerBox(widgets.VBox):
        def __repr__(self) -> str:
            return "the explorer: type a row, a mask and a pad id (the widgets need a running kernel)"

    return ExplorerBox(children=children)
