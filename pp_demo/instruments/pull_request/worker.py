"""The part of ``verify-pr`` that imports ColossalAI: one process per sdist, all its variants.

Run as ``python -m pp_demo.colossalai.pull_request.worker JOB.json OUT.json`` with the first
variant's tree first on ``PYTHONPATH``; JOB is ``{"sdist": stem, "trees": {variant: folder}}``.
Each variant's ``colossalai`` is imported from its folder in turn, the previous one dropped, so
one process serves every variant (torch and transformers are imported once). Per row it writes
whether the logits equal ``model.forward``'s and where they were pooled
(``pp_demo.verify.where_pooled``), for the parent to compare with ``pp_demo.core``.
"""

import contextlib
import json
import pathlib
import sys
from typing import Any

import torch

from pp_demo.colossalai.forwards import FORWARD_ATTENTION, forget_imported_tree, forwards_in_tree
from pp_demo.core import FAMILIES, PAD, REVIEW_TABLE, as_batch, build_model
from pp_demo.verify.checker.batches import random_row
from pp_demo.verify.compare import compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance
from pp_demo.verify.where_pooled import per_position_logits, pooled_positions_of

__all__ = ["claim_batches", "random_rows", "run_variant"]

ATOL = tolerance("cpu")
"""CPU fp32: the forwards run the same arithmetic as ``model.forward`` (the shared tolerance)."""


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


def run_variant(
    forwards: dict[str, Any], models: dict[str, Any], data: dict[str, tuple[torch.Tensor, torch.Tensor]]
) -> dict[str, Any]:
    """``{family: {batch: {"matches": [...], "pooled": [...]}}}`` for one imported tree."""
    out: dict[str, Any] = {}
    for family, forward in forwards.items():
        out[family] = {}
        for name, (ids, mask) in data.items():
            logits = forward(models[family], ids, mask)
            matches = compare_rows(logits, forward_logits(models[family], ids, mask), ATOL).matches
            every = per_position_logits(models[family], ids, mask)
            out[family][name] = {"matches": matches, "pooled": pooled_positions_of(every, logits, ATOL)}
    return out


def _import_tree(tree: str) -> tuple[str, bool, dict[str, Any]]:
    forget_imported_tree()
    sys.path = [p for p in sys.path if p != tree]
    sys.path.insert(0, tree)
    # the nightly prints a "please install" line when imported from source: keep stdout clean
    with contextlib.redirect_stdout(sys.stderr):
        import colossalai
    inside = pathlib.Path(colossalai.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve())
    return colossalai.__version__, inside, forwards_in_tree()


def main(job_path: str, out_path: str) -> None:
    job = json.loads(pathlib.Path(job_path).read_text())
    data = claim_batches()
    models = {}
    result = {"sdist": job["sdist"], "variants": {}}
    for variant, tree in job["trees"].items():
        version, inside, forwards = _import_tree(tree)
        for family in [f for f in forwards if f not in models]:
            models[family] = build_model(family, attn_implementation=FORWARD_ATTENTION.get(family)).eval()
        result["variants"][variant] = {
            "tree": f"sdist {job['sdist']}, variant {variant}",
            "colossalai.__version__": version,
            "colossalai.__file__ inside the tree": inside,
            "families": run_variant(forwards, models, data),
        }
    pathlib.Path(out_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:3])
