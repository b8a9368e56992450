"""The part of ``verify-pr`` that imports ColossalAI: one process per sdist, all its variants.

Run as ``python -m pp_demo.instruments.pull_request.worker JOB.json OUT.json`` with the first
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
from pp_demo.core import build_model
from pp_demo.records.pull_request import claim_batches
from pp_demo.verify.compare import compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance
from pp_demo.verify.where_pooled import per_position_logits, pooled_positions_of

__all__ = ["run_variant"]

ATOL = tolerance("cpu")
"""CPU fp32: the forwards run the same arithmetic as ``model.forward`` (the shared tolerance)."""


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
