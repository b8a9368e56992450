"""The pull request, read back: what notebook 09 and its exercises read of ``verify-pr``'s work.

``results/verify_pr.json`` holds the verdicts (``format_verdicts`` prints them as the command
does), ``pp_demo/instruments/pull_request/patches/`` the diffs (``changed_lines`` shows one on a
projector), and ``claim_batches`` the batches every forward ran on. ``verify-pr`` itself
(``pp_demo.instruments.pull_request``) builds the trees, runs them and writes the record; it
imports these from here.
"""

import itertools
import textwrap
from typing import Any

import torch

from pp_demo.core import FAMILIES, PAD, REVIEW_TABLE, as_batch
from pp_demo.pooling.survey import PROJECTOR_WIDTH
from pp_demo.verify.checker.batches import random_row

__all__ = ["random_rows", "claim_batches", "PAD_ALIAS", "changed_lines", "format_verdicts"]


def random_rows(n: int = 32, length: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)``: seeded rows of the checker battery's ``random_row``
    (``pp_demo.verify.checker.batches``). Rows of pad ids only are skipped: every position holds
    the same id, so logits cannot tell where such a row was pooled (claim 4 judges by logits)."""
    generator = torch.Generator().manual_seed(seed)
    vocab = min(family.tiny["vocab_size"] for family in FAMILIES.values())  # ids every tiny model takes
    rows: list[tuple[torch.Tensor, torch.Tensor]] = []
    while len(rows) < n:
        row = random_row(length, PAD, vocab, generator)
        if (row[0] != PAD).any():
            rows.append(row)
    ids, mask = (torch.stack(parts) for parts in zip(*rows, strict=True))
    return ids, mask


def claim_batches() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The batches every forward runs on: the reproduction, claim 2's left- and right-padded
    batches (rows of two lengths), the review table's four rows, and the random rows."""
    return {
        "reproduction": as_batch(("left", "right")),
        "left-padded": as_batch(("left", "unpadded")),
        "right-padded": as_batch(("right", "unpadded")),
        "review": as_batch(REVIEW_TABLE),
        "random": random_rows(),
    }


PAD_ALIAS = {"self.config.pad_token_id": "pad"}
"""What ``changed_lines`` abbreviates by default, and says so in its first line."""


def _hunks(text: str) -> list[tuple[str, int, list[str]]]:
    """(file, the old file's line number of the first changed line, the changed lines) per hunk."""
    hunks: list[tuple[str, int, list[str]]] = []
    path, old_line = "", 0
    changed: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("--- a/"):
            path = line[6:].split()[0]
        elif line.startswith("+++ "):
            continue
        elif line.startswith("@@"):
            old_line, changed = int(line.split()[1].lstrip("-").split(",")[0]), None
        elif line.startswith(("-", "+")):
            if changed is None:
                changed = []
                hunks.append((path, old_line, changed))
            changed.append(line)
        elif changed is None:
            old_line += 1  # a context line before the change
    return hunks


def changed_lines(text: str, alias: dict[str, str] | None = None) -> str:
    """The changed lines of a unified diff, for reading off a projector: each hunk as
    ``file:line`` (its first changed line in the old file) and its ``-``/``+`` lines dedented,
    hunks with the same lines under one heading, each ``alias`` key written as its value
    (``PAD_ALIAS`` by default, said first)."""
    alias = PAD_ALIAS if alias is None else alias
    grouped: dict[tuple[str, ...], list[str]] = {}
    for path, line, changed in _hunks(text):
        codes = [c[1:] for c in changed]
        indent = min(len(c) - len(c.lstrip()) for c in codes if c.strip())
        body = []
        for sign, code in zip((c[0] for c in changed), codes, strict=True):
            for long, short in alias.items():
                code = code.replace(long, short)
            body.append(f"{sign} {code[indent:]}".rstrip())
        grouped.setdefault(tuple(body), []).append(f"{path}:{line}")
    folders = {where.rsplit("/", 1)[0] for wheres in grouped.values() for where in wheres}
    folder = folders.pop() + "/" if len(folders) == 1 else ""
    lines = [
        f"changed lines only; file:line in 0.5.0's unpatched {folder or 'tree'}",
        *(f"{short} stands for {long}" for long, short in alias.items()),
    ]
    for hunk_lines, wheres in grouped.items():
        lines += ["", ", ".join(w.removeprefix(folder) for w in wheres), *hunk_lines]
    return "\n".join(lines)


def format_verdicts(record: dict[str, Any], width: int = PROJECTOR_WIDTH) -> str:
    """The table: one block per claim, and under it a verdict per sdist with what was run, what
    was seen and the difference; lines at most ``width`` wide (a room reads them off a projector)."""
    lines = ["claim", f"  {'sdist':<30} verdict", "-" * min(width, 64)]
    for claim, rows in itertools.groupby(record["claims"], key=lambda row: row["claim"]):
        lines.append(claim)
        for row in rows:
            lines.append(f"  {row['sdist']:<30} {row['verdict']}")
            for key in ("ran", "seen", "difference"):
                if row[key]:
                    lines += textwrap.wrap(row[key], width, initial_indent=f"    {key}: ", subsequent_indent=" " * 10)
    return "\n".join(lines)
