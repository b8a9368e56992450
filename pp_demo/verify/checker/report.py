"""The checker's verdict: per batch, per row, and the exit code a CI job reads.

Exit codes (of ``python -m pp_demo check`` and ``Report.exit_code``):

* ``0`` PASS: every batch ran and every row's logits match the reference.
* ``1`` MISMATCH: the callable returned logits for every batch, and some rows differ.
* ``2`` usage error: pp_demo refused an input before running (``pp_demo.errors.BadInput``).
* ``3`` the callable failed on some batch, nothing judged there: it raised (``SystemExit`` too),
  ran past the timeout (the batches after it are not run), or returned something that is not logits.
* ``4`` UNTESTED: every row matched, but the cases run (``--cases right``, say) pool alike under
  every known rule, the bug's included: a match there says nothing of the pooling, so it is no PASS.
* ``130`` interrupted (Ctrl-C), ``143`` stopped by SIGTERM from outside (``timeout``, a CI limit):
  no verdict (the command only: ``pp_demo.verify.checker.guard``).

The reference is named in every report: the position ``model.forward`` pools, or, for a model
without a pad id (whose ``model.forward`` refuses batches), the true last real token by the mask.
"""

from dataclasses import dataclass, field

import torch

# the exit statuses live with the guard process, which must say them without importing torch
from .guard import EXIT_CALLABLE_FAILED, EXIT_INTERRUPTED, EXIT_MISMATCH, EXIT_PASS, EXIT_UNTESTED, EXIT_USAGE

__all__ = ["EXIT_PASS", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_CALLABLE_FAILED", "EXIT_UNTESTED", "EXIT_INTERRUPTED"]
__all__ += ["RowCheck", "CaseCheck", "Report", "FORWARD", "TRUE_LAST"]


FORWARD = "the position model.forward pools"
TRUE_LAST = "the true last real token (attention mask): the model has no pad id, so model.forward refuses batches"


@dataclass(frozen=True)
class RowCheck:
    matches: bool
    max_abs_diff: float
    pooled_at: tuple[int, ...]  # positions whose logits equal the callable's (empty: none)
    forward_pools: int | None  # the reference position: model.forward's, or the true last (no pad id)
    true_last: int | None  # last real token by the mask (None: no real token)
    rounded_to: str | None = None  # the callable's coarser dtype, when only its rounding hides pooled_at
    nan: bool = False  # the callable's logits for this row are not finite
    inf: bool = False  # ... and among them an inf (nan alone: NaN only)


@dataclass
class CaseCheck:
    name: str
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    rows: list[RowCheck]
    failure: str | None = None  # the callable failed on this batch: nothing was compared
    timed_out: bool = False  # ... by running past the timeout: the batches after it are not run

    @property
    def passed(self) -> bool:
        return self.failure is None and all(r.matches for r in self.rows)

    @property
    def shape(self) -> str:
        return "x".join(map(str, self.input_ids.shape))

    def status(self) -> str:
        """The progress line's verdict for this batch."""
        if self.failure is not None:
            return f"your callable {self.failure}"
        bad = [i for i, r in enumerate(self.rows) if not r.matches]
        return "ok" if not bad else f"rows {bad} differ"


@dataclass
class Report:
    cases: list[CaseCheck]
    atol: float
    consistent_rules: list[str] = field(default_factory=list)
    reference: str = FORWARD
    notes: list[str] = field(default_factory=list)  # e.g. lengths shortened to the model's limit
    not_run: list[str] = field(default_factory=list)  # batches skipped after a timeout or a rank's failure
    not_run_why: str = "a rank's state is unknown"  # why they were skipped, as the summary says it
    tells_apart: bool = True  # some row of the battery is pooled differently by two known rules

    @property
    def matched(self) -> bool:
        """Every batch ran and every row matched (a pass only when ``tells_apart``)."""
        return not self.not_run and all(c.passed for c in self.cases)

    @property
    def passed(self) -> bool:
        return self.matched and self.tells_apart

    @property
    def callable_failed(self) -> bool:
        return bool(self.not_run) or any(c.failure is not None for c in self.cases)

    @property
    def exit_code(self) -> int:
        if self.callable_failed:
            return EXIT_CALLABLE_FAILED
        if self.matched and not self.tells_apart:
            return EXIT_UNTESTED
        return EXIT_PASS if self.passed else EXIT_MISMATCH

    def summary(self) -> str:
        """A few lines a maintainer can read: verdict, failing cases, what the rule looks like."""
        total = len(self.cases) + len(self.not_run)
        words = {EXIT_PASS: "PASS", EXIT_UNTESTED: "UNTESTED", EXIT_CALLABLE_FAILED: "FAIL (your callable failed)"}
        verdict = words.get(self.exit_code, "FAIL")
        lines = [
            f"{verdict}: {sum(c.passed for c in self.cases)}/{total} batches match the reference "
            f"(|diff| <= {self.atol:g})",
            f"reference: {self.reference}",
            *self.notes,
        ]
        for case in self.cases:
            if case.failure is not None:
                lines.append(f"  batch {case.name} ({case.shape}): your callable {case.failure}")
            elif not case.passed:
                lines.append(_mismatch_line(case, self.reference == FORWARD))
        if self.not_run:
            lines.append(f"  not run after that failure ({self.not_run_why}): {', '.join(self.not_run)}")
        if not self.callable_failed:
            lines.append(f"consistent with: {', '.join(self.consistent_rules) or 'none of the known rules'}")
            if not self.tells_apart:
                lines.append(
                    "warning: these cases pool alike under every known rule (the bug's too), so they cannot "
                    "catch a wrong pooled position: not a test of the pooling; add left or pad_in_content"
                )
        return "\n".join(lines)


def _mismatch_line(case: CaseCheck, by_forward: bool) -> str:
    bad = [i for i, r in enumerate(case.rows) if not r.matches]
    row = case.rows[bad[0]]
    nan = [i for i, r in enumerate(case.rows) if r.nan and not r.inf]
    inf = [i for i, r in enumerate(case.rows) if r.inf]
    if nan or inf:
        found = [f"{what} in rows {rows}" for what, rows in (("NaN", nan), ("inf", inf)) if rows]
        return f"  {case.name}: {' and '.join(found)} of your logits; rows {bad} differ"
    return (
        f"  {case.name}: rows {bad} differ; row {bad[0]} {case.input_ids[bad[0]].tolist()} pooled at "
        f"{_where(row, by_forward)}, {'model.forward pools' if by_forward else 'the true last real token is'} "
        f"{row.forward_pools}, max |diff| {row.max_abs_diff:.3g}"
    )


def _where(row: RowCheck, by_forward: bool) -> str:
    positions = row.pooled_at
    if not positions:
        return "no position (the hidden states differ, not just the pooling)"
    if len(positions) > 3:  # e.g. padding positions that all see the same uniform attention
        where = f"any of {len(positions)} positions ({positions[0]}..{positions[-1]}), whose logits coincide"
    else:
        where = f"position {', '.join(map(str, positions))}"
    if row.rounded_to is None:
        return where
    target = FORWARD if by_forward else "the true last real token"
    if row.forward_pools in positions:
        return f"{where} ({target}), only rounded to {row.rounded_to}"
    return f"{where}, not {target} (the logits are also rounded to {row.rounded_to})"
