"""The cases x rules table: which position each rule pools, judged against one reference.

Two references exist (``REFERENCES``; ``pp_demo.core`` says why they differ) and a table
is judged by exactly one, which the header of every printed table names.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from pp_demo.core import CASES, CORE_RULES, PaddingCase, Rule, get_case, get_rule
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import PADDED_RULES, pooled_positions
from pp_demo.pooling.survey import PROJECTOR_WIDTH

__all__ = [
    "REFERENCES",
    "RIGHT",
    "WRONG",
    "NO_ANSWER",
    "mark",
    "Verdict",
    "judge",
    "resolve_cases",
    "padding_table",
    "format_padding_table",
    "two_line_heading",
    "row_text",
]

REFERENCES = {
    "true_last": "the true last real token (from the attention mask)",
    "forward": "the position model.forward pools (transformers 4.51.3: rightmost non-pad id)",
}
RIGHT, WRONG, NO_ANSWER = "✓", "✗", "-"


def row_text(row: Iterable[int | torch.Tensor]) -> str:
    """A row of ids or mask values as ``[0,0,5,6]``: compact, for tables and messages."""
    return "[" + ",".join(str(int(t)) for t in row) + "]"


def mark(right: bool | None) -> str:
    """The mark of a verdict: ``RIGHT``, ``WRONG``, or ``NO_ANSWER`` when there is nothing to be
    right about (``None``). Every table and figure marks its cells with this, never colour alone."""
    return NO_ANSWER if right is None else (RIGHT if right else WRONG)


@dataclass(frozen=True)
class Verdict:
    """One rule on one batch (a padding case or a packed batch), the one cell type of every grid.

    ``positions`` are raw, one per sequence (``None`` when the rule cannot run on that kind
    of batch); ``expected`` is the reference's answer (``None`` when there is none);
    ``right`` is ``None`` when there is nothing to be right about. It judges positions, not
    logits: ``pp_demo.verify.compare.RowComparison`` says why the verdict types stay apart."""

    rule: str
    case: str
    positions: tuple[int, ...] | None
    expected: tuple[int, ...] | None
    right: bool | None
    length: int  # the batch's row length: where a raw position lands is position % length

    @property
    def position(self) -> int:
        """The raw position on a padded case (one sequence), as the rule returns it (may be -1)."""
        if self.positions is None:
            raise BadInput(f"rule {self.rule!r} cannot run on {self.case!r}: it has no position")
        return self.positions[0]

    @property
    def lands_on(self) -> int:
        """Where tensor indexing reads ``position``."""
        return self.position % self.length

    @property
    def mark(self) -> str:
        return mark(self.right)

    @property
    def status(self) -> str:
        if self.positions is None:
            return "cannot run"
        if self.right is None:
            return "no answer"
        return "right" if self.right else "wrong"

    @property
    def rule_class(self) -> str:
        from pp_demo.pooling.survey import RULE_CLASS  # the survey loads where a class is asked for, only

        return RULE_CLASS.get(self.rule, "?")


def _reference(case: PaddingCase, reference: str) -> int | None:
    if reference not in REFERENCES:
        raise BadInput(f"unknown reference {reference!r}; use one of {', '.join(REFERENCES)}")
    return case.true_last if reference == "true_last" else case.forward_pools


def resolve_cases(cases: Sequence[str | PaddingCase] | None = None) -> list[PaddingCase]:
    """Case names or ``PaddingCase`` objects (a row of your own) as ``PaddingCase``s; all by default."""
    return [get_case(c) if isinstance(c, str) else c for c in (cases or CASES.values())]


def judge(rule: str | Rule, case: PaddingCase, reference: str = "true_last", pad_token_id: int = 0) -> Verdict:
    """One rule on one padding case as a batch of one, judged by ``reference``."""
    found = get_rule(rule)
    if found.name not in PADDED_RULES:  # a padded batch carries no lengths to read
        return Verdict(found.name, case.name, None, None, None, case.length)
    ids, mask = case.tensors()
    expected = _reference(case, reference)
    position = int(pooled_positions(found, input_ids=ids, pad_token_id=pad_token_id, attention_mask=mask)[0])
    right = None if expected is None else position % case.length == expected
    return Verdict(found.name, case.name, (position,), None if expected is None else (expected,), right, case.length)


def padding_table(
    rules: Sequence[str] | None = None,
    cases: Sequence[str | PaddingCase] | None = None,
    reference: str = "true_last",
    pad_token_id: int = 0,
) -> list[list[Verdict]]:
    """Every rule on every case, one row of ``Verdict`` per case.

    Each case runs as a batch of one, so no rule sees another row's padding. By default
    the five core rules of the review table (``CORE_RULES``); a packed-batch rule cannot run here.
    """
    for what, given in (("rule", rules), ("case", cases)):  # a string is a sequence too: read letter by letter
        if isinstance(given, str | bytes):
            raise BadInput(f"{what}s takes a list of {what} names, got the string {given!r}: give [{given!r}]")
    names = [get_rule(r).name for r in (rules or CORE_RULES)]
    packed = [r for r in names if r not in PADDED_RULES]
    if packed:
        raise BadInput(
            f"rule {packed[0]!r} pools packed batches from their lengths (cu_seqlens); the "
            f"padding table has padded rows only (notebook 07 compares it)"
        )
    _reference(CASES["left"], reference)  # an unknown reference fails before any work
    return [[judge(name, case, reference, pad_token_id) for name in names] for case in resolve_cases(cases)]


def two_line_heading(name: str, fits: int = 5) -> tuple[str, str]:
    """A column heading over two lines, so a column is as wide as its wider half, not its name.

    A name longer than ``fits`` is cut at the underscore or space that balances the two
    halves best; an underscore stays with one half (``first_pad_mod`` as ``first_`` over
    ``pad_mod``, ``rightmost_non_pad`` as ``rightmost`` over ``_non_pad``), a space goes.
    """
    halves = []
    for i, char in enumerate(name):
        if char == " ":
            halves.append((name[:i], name[i + 1 :]))
        elif char == "_":
            halves += [(name[: i + 1], name[i + 1 :]), (name[:i], name[i:])]
    if len(name) <= fits or not halves:
        return "", name
    return min(halves, key=lambda pair: max(len(pair[0]), len(pair[1])))


def _rule_blocks(widths: Sequence[int], room: int) -> list[list[int]]:
    """The rule columns, in order, in as few blocks as keep each line within ``room``."""
    blocks: list[list[int]] = [[]]
    used = 0
    for i, width in enumerate(widths):
        if blocks[-1] and used + 2 + width > room:
            blocks.append([])
            used = 0
        blocks[-1].append(i)
        used += 2 + width
    return blocks


def format_padding_table(
    rules: Sequence[str] | None = None,
    cases: Sequence[str | PaddingCase] | None = None,
    reference: str = "true_last",
    pad_token_id: int = 0,
) -> str:
    """The table as text: raw position and a mark per cell, the reference named on top.

    Headings take two lines (``two_line_heading``); rules still too wide for ``PROJECTOR_WIDTH``
    are printed in blocks, one under another, each with the case, its ids and the reference.
    """
    resolved = resolve_cases(cases)
    table = padding_table(rules, resolved, reference, pad_token_id)
    ids_text = {case.name: row_text(case.input_ids) for case in resolved}
    ref_top, ref_bottom = two_line_heading("true last" if reference == "true_last" else "forward")
    ref_w = max(len(ref_top), len(ref_bottom), 4)
    headings = [two_line_heading(cell.rule) for cell in table[0]]
    widths = [max(len(top), len(bottom), 4) for top, bottom in headings]
    case_w = max(len(c) for c in [*ids_text, "case"]) + 1
    ids_w = max(len(t) for t in [*ids_text.values(), "input_ids"]) + 1
    lines = [
        f"judged by {REFERENCES[reference]}",
        f"{RIGHT} right   {WRONG} wrong   {NO_ANSWER} no real token to find",
        "positions are raw: -1 reads the last token",
    ]
    for block in _rule_blocks(widths, PROJECTOR_WIDTH - case_w - ids_w - ref_w):
        tops = "".join(f"  {headings[i][0]:>{widths[i]}}" for i in block)
        bottoms = "".join(f"  {headings[i][1]:>{widths[i]}}" for i in block)
        lines += [
            "",
            f"{'':<{case_w + ids_w}}{ref_top:>{ref_w}}{tops}".rstrip(),
            f"{'case':<{case_w}}{'input_ids':<{ids_w}}{ref_bottom:>{ref_w}}{bottoms}",
        ]
        for row in table:
            expected = "none" if row[0].expected is None else str(row[0].expected[0])
            cells = "".join(f"  {f'{row[i].position} {row[i].mark}':>{widths[i]}}" for i in block)
            lines.append(f"{row[0].case:<{case_w}}{ids_text[row[0].case]:<{ids_w}}{expected:>{ref_w}}{cells}")
    return "\n".join(lines)
