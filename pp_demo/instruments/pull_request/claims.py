"""The pull request's claims, judged on what ColossalAI's own forwards did (``pull_request.worker``).

Every judgement compares what was seen with what was stated, and with what ``pp_demo.core``
predicts for the same rows: a forward whose file a variant patched pools the rightmost non-pad
position, any other pools by its family's ColossalAI 0.5.0 rule. ``model.forward`` pools the
rightmost non-pad position, so a forward matches it exactly where the two positions agree.
"""

from typing import Any

import torch

from pp_demo.core import FAMILIES, FIX, PAD
from pp_demo.instruments.pull_request.sdists import CHANGE_FILES, FOLLOW_UP_FILES, VARIANTS
from pp_demo.pooling.failure import SENTENCES
from pp_demo.pooling.positions import pooled_positions

Record = dict[str, Any]
"""The worker's nested results: ``{variant: {family: {batch: {"matches", "pooled"}}}}``."""
ClaimBatches = dict[str, tuple[torch.Tensor, torch.Tensor]]

__all__ = ["first_pad_wrong", "predicted", "judge_all", "VERIFIED", "DOCUMENTED", "NOT_AS_STATED"]

VERIFIED, DOCUMENTED, NOT_AS_STATED = "verified", "verified, documented difference", "not as stated"


def first_pad_wrong(row: list[int]) -> bool:
    """Claim 4 from the arithmetic. ``eq(ids, pad).argmax(-1) - 1`` is one before the first pad
    id p (p = 0 when there is none), and indexing (or the modulo) turns -1 into L - 1. That is
    the rightmost non-pad position except in two cases: the first pad id follows a real token
    (p >= 1) and a non-pad id comes after it, or the row starts with a pad id and ends with one."""
    row = list(row)
    if PAD not in row:
        return False
    first = row.index(PAD)
    if first == 0:
        return row[-1] == PAD
    return any(token != PAD for token in row[first:])


def predicted(variant: str, family: str, input_ids: torch.Tensor) -> list[int]:
    """Positions ``pp_demo.core`` says the variant's forward pools (taken modulo L, as indexing does)."""
    patched = {f for _, files in VARIANTS[variant] for f in files}
    rule = FIX if family in patched else FAMILIES[family].colossalai_rule
    assert rule is not None, f"{family} has no ColossalAI forward"  # the workers run only those
    wrapped: list[int] = (pooled_positions(rule, input_ids=input_ids, pad_token_id=PAD) % input_ids.shape[-1]).tolist()
    return wrapped


def claim_row(claim: str, sdist: str, ran: str, seen: str, verdict: str, difference: str = "") -> dict[str, str]:
    """One row of the claims table, as ``results/verify_pr.json`` holds it."""
    return {"claim": claim, "sdist": sdist, "ran": ran, "seen": seen, "verdict": verdict, "difference": difference}


Judged = tuple[str, str] | tuple[str, str, str]
"""What a claim's judge found: ``(seen, verdict)``, or ``(seen, verdict, difference)``."""


def _fails(families: Record, variant: str, family: str, batch: str) -> list[bool]:
    return [not m for m in families[variant][family][batch]["matches"]]


def _claim1(fams: Record) -> Judged:
    seen = {v: {f: fams[v][f]["reproduction"]["matches"] for f in CHANGE_FILES} for v in ("unpatched", "change")}
    ok = all(m == [False, True] for m in seen["unpatched"].values())
    ok &= all(m == [True, True] for m in seen["change"].values())
    text = "; ".join(f"{v}: " + ", ".join(f"{f} {m}" for f, m in seen[v].items()) for v in seen)
    return text, VERIFIED if ok else NOT_AS_STATED


STATED_FAILURES: dict[str, set[tuple[str, str]]] = {
    "change": set(),
    "change minus qwen2.py": {("qwen2", "left")},
    "change minus opt.py": {("opt", "left")},
}


def _claim2(fams: Record) -> Judged:
    variants = ("unpatched", "change", "change minus llama.py", "change minus qwen2.py", "change minus opt.py")
    sides = [(f, side) for f in CHANGE_FILES for side in ("left", "right")]
    seen = {v: sorted((f, s) for f, s in sides if any(_fails(fams, v, f, f"{s}-padded"))) for v in variants}
    ok = all(set(seen[v]) == s for v, s in STATED_FAILURES.items()) and ("llama", "left") in seen["unpatched"]
    old_all_left = set(seen["unpatched"]) == {(f, "left") for f in CHANGE_FILES}
    text = "; ".join(f"{v}: " + (", ".join(f"{f} {s}" for f, s in seen[v]) or "passes") for v in variants)
    note = "old code fails elsewhere: see seen"
    if old_all_left:
        note = "the PR names the first failure of the old code (llama, left); the full set is llama, qwen2 "
        note += "and opt with left padding"
    return text, VERIFIED if ok and old_all_left else NOT_AS_STATED, note


def _aligned(fams: Record, variant: str) -> list[str]:
    return [f for f, batches in fams[variant].items() if all(all(b["matches"]) for b in batches.values())]


def _claim3(fams: Record, data: ClaimBatches) -> Judged:
    same = all(
        p in seen
        for f in CHANGE_FILES
        for b in data
        for p, seen in zip(predicted("change", f, data[b][0]), fams["change"][f][b]["pooled"], strict=True)
    )
    aligned, total = _aligned(fams, "change"), len(fams["change"])
    seen = (
        f"changed forwards pool the rightmost non-pad position on every row: {same}; aligned with "
        f"model.forward on every row: {len(aligned)} of {total} ({', '.join(aligned)})"
    )
    if same and (len(aligned), total) == (4, 9):
        verdict, note = VERIFIED, ""
    elif same and (len(aligned), total) == (3, 8) and "qwen3" not in fams["change"]:
        verdict, note = DOCUMENTED, "0.5.0 has no qwen3.py: 3 of 8 (4 of 9 holds on the nightly)"
    else:
        verdict, note = NOT_AS_STATED, "expected 4 of 9 (nightly) or 3 of 8 (0.5.0)"
    return seen, verdict, note


def _claim4(fams: Record, data: ClaimBatches) -> Judged:
    review_ok, same, stated = True, True, list[bool]()
    for batch in ("review", "random"):
        ids = data[batch][0]
        stated_here = [first_pad_wrong(r) for r in ids.tolist()]
        fix = pooled_positions(FIX, input_ids=ids, pad_token_id=PAD).tolist()
        for f in FOLLOW_UP_FILES:
            by_rules = [p != q for p, q in zip(predicted("unpatched", f, ids), fix, strict=True)]
            seen_wrong = _fails(fams, "unpatched", f, batch)
            same &= seen_wrong == stated_here == by_rules
            review_ok &= batch != "review" or seen_wrong == [False, False, False, True]
        stated += stated_here
    wrong = sum(stated[4:])
    seen = (
        f"review rows wrong only on [5,0,7,8,0,0]: {review_ok}; wrong rows = the arithmetic's = pp_demo.core' "
        f"on 4 review + {len(stated) - 4} random rows for all five: {same} ({wrong} random rows wrong)"
    )
    # the sentence the exhaustive test of pp_demo.pooling.failure checked, not a paraphrase
    note = f"precisely: wrong iff {SENTENCES['first_pad_mod', 'forward']}"
    return seen, VERIFIED if review_ok and same else NOT_AS_STATED, note


def _follow_up(fams: Record) -> Judged:
    aligned, total = _aligned(fams, "change + follow-up"), len(fams["change + follow-up"])
    seen = f"aligned with model.forward on every row: {len(aligned)} of {total}"
    return seen, VERIFIED if len(aligned) == total else NOT_AS_STATED


def _rules_agree(fams: Record, data: ClaimBatches) -> Judged:
    rows = bad = 0
    for variant, families in fams.items():
        for family, batches in families.items():
            for name, seen in batches.items():
                expect = predicted(variant, family, data[name][0])
                fix = pooled_positions(FIX, input_ids=data[name][0], pad_token_id=PAD).tolist()
                for pooled, match, e, x in zip(seen["pooled"], seen["matches"], expect, fix, strict=True):
                    rows += 1
                    bad += e not in pooled or match != (e == x)
    seen = f"{rows - bad} of {rows} rows pooled where the rules say, matching model.forward as they say"
    return seen, VERIFIED if bad == 0 else NOT_AS_STATED


# each claim as the table states it, and what was run to judge it (judge_all's order)
_CLAIMS = [
    (
        "1 reproduction [False, True] -> [True, True]",
        "left- and right-padded row through llama, qwen2, opt; unpatched and change",
    ),
    (
        "2 test: left/right batch, one stage, vs model.forward",
        "own CPU test on 5 variants x 3 families x 2 padding sides",
    ),
    (
        "3 same expression as transformers/qwen3; 4 of 9 aligned",
        "every pooling forward of the tree with the change, on every batch",
    ),
    (
        "4 first-pad forwards: left padding fine, pad inside wrong",
        "gpt2, bloom, falcon, gptj, mistral unpatched on review + seeded random rows",
    ),
    ("follow-up: the five first-pad forwards moved too", "every pooling forward with change + follow-up, every batch"),
    ("pp_demo.core predict what the forwards pool", "every variant, forward, batch and row"),
]


def judge_all(sdist: str, fams: Record, data: ClaimBatches) -> list[dict[str, str]]:
    """The table's rows for one sdist; ``data``: ``pp_demo.records.pull_request.claim_batches()``."""
    judged = [_claim1(fams), _claim2(fams), _claim3(fams, data), _claim4(fams, data)]
    judged += [_follow_up(fams), _rules_agree(fams, data)]
    return [claim_row(claim, sdist, ran, *found) for (claim, ran), found in zip(_CLAIMS, judged, strict=True)]
