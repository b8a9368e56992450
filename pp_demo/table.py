"""The cases x rules table: which position each rule pools, judged against one reference.

Two references exist (see ``pp_demo.cases``) and a table is judged by exactly one:
``"true_last"`` (the last real token, from the attention mask) or ``"forward"``
(the position ``model.forward`` pools). The header of every printed table names it.
"""

from dataclasses import dataclass

from .cases import CASES, get_case, row_text
from .rules import CORE_RULES, get_rule, pooled_positions

__all__ = ["REFERENCES", "Cell", "resolve_cases", "padding_table", "format_padding_table"]

REFERENCES = {
    "true_last": "the true last real token (from the attention mask)",
    "forward": "the position model.forward pools (transformers 4.51.3: rightmost non-pad id)",
}
RIGHT, WRONG, NO_ANSWER = "✓", "✗", "-"


@dataclass(frozen=True)
class Cell:
    """One rule on one case: the raw position, where indexing lands, and the verdict."""

    case: str
    rule: str
    position: int       # as the rule returns it (may be -1)
    lands_on: int       # where tensor indexing reads it: position % length
    expected: int | None
    right: bool | None  # None when the reference has no answer (all-pad row, true_last)

    @property
    def mark(self):
        return NO_ANSWER if self.right is None else (RIGHT if self.right else WRONG)


def _reference(case, reference):
    if reference not in REFERENCES:
        raise ValueError(f"unknown reference {reference!r}; use one of {', '.join(REFERENCES)}")
    return case.true_last if reference == "true_last" else case.forward_pools


def resolve_cases(cases=None):
    """Case names or ``PaddingCase`` objects (a row of your own) as ``PaddingCase``s; all by default."""
    return [get_case(c) if isinstance(c, str) else c for c in (cases or CASES.values())]


def padding_table(rules=None, cases=None, reference="true_last", pad_token_id=0):
    """Every rule on every case, one row of ``Cell`` per case.

    Each case runs as a batch of one, so no rule sees another row's padding. By default
    the five rules of the review table (``CORE_RULES``); a packed-batch rule cannot run here.
    """
    rules = [get_rule(r).name for r in (rules or CORE_RULES)]
    packed = [r for r in rules if "cu_seqlens" in get_rule(r).needs]
    if packed:
        raise ValueError(f"rule {packed[0]!r} pools packed batches from their lengths (cu_seqlens); the "
                         f"padding table has padded rows only (notebook 07 compares it)")
    cases = resolve_cases(cases)
    table = []
    for case in cases:
        ids, mask = case.tensors()
        expected = _reference(case, reference)
        row = []
        for name in rules:
            position = int(pooled_positions(name, input_ids=ids, pad_token_id=pad_token_id,
                                            attention_mask=mask)[0])
            lands_on = position % case.length
            right = None if expected is None else lands_on == expected
            row.append(Cell(case.name, name, position, lands_on, expected, right))
        table.append(row)
    return table


def format_padding_table(rules=None, cases=None, reference="true_last", pad_token_id=0):
    """The table as text: raw position and a mark per cell, the reference named on top."""
    cases = resolve_cases(cases)
    table = padding_table(rules, cases, reference, pad_token_id)
    rules = [cell.rule for cell in table[0]]
    ids_text = {case.name: row_text(case.input_ids) for case in cases}
    ref_head = "true last" if reference == "true_last" else "forward"
    widths = [max(len(r), 5) for r in rules]
    case_w = max(len(c) for c in ids_text) + 1
    ids_w = max(len(t) for t in ids_text.values()) + 1
    lines = [
        f"judged by {REFERENCES[reference]}",
        f"{RIGHT} right   {WRONG} wrong   {NO_ANSWER} no real token to find; positions are raw (-1 reads the last)",
        "",
        f"{'case':<{case_w}}{'input_ids':<{ids_w}}{ref_head:>9}  " + "  ".join(f"{r:>{w}}" for r, w in zip(rules, widths)),
    ]
    for row in table:
        expected = "none" if row[0].expected is None else str(row[0].expected)
        cells = "  ".join(f"{f'{c.position} {c.mark}':>{w}}" for c, w in zip(row, widths))
        lines.append(f"{row[0].case:<{case_w}}{ids_text[row[0].case]:<{ids_w}}{expected:>9}  {cells}")
    return "\n".join(lines)
