"""The part of ``verify-pr`` that imports ColossalAI: one process per sdist, all its variants.

Run as ``python -m pp_demo.colossalai.verify_pr_worker JOB.json OUT.json`` with the first variant's tree
first on ``PYTHONPATH``. JOB is ``{"sdist": stem, "trees": {variant: folder}}``. For each
variant it imports ``colossalai`` from that folder (dropping the previous import, so one
process serves every variant: torch and transformers are imported once), records whether
``colossalai.__file__`` lies inside it, and runs every pooling forward the tree has on each
batch of ``batches()``. Per row it writes whether the logits equal ``model.forward``'s and
which positions they may have been pooled from (matched against the logits ``model.forward`` computes
at every position), so the parent can compare them with ``pp_demo.pooling.rules``.
"""

import contextlib
import json
import pathlib
import sys
from typing import Any

import torch

from pp_demo.pooling.cases import PAD, REVIEW_TABLE, as_batch

__all__ = ["batches", "random_rows", "run_variant"]

ATOL = 1e-6
"""CPU fp32, as ``pp_demo.verify.tolerances.tolerance``: the forwards run the same arithmetic."""

# GPT-2's default sdpa attention differs from ColossalAI's body by float noise on every row
# (tests/test_colossalai.py shows why); its pooling is compared under eager attention.
ATTENTION = {"gpt2": "eager"}


def random_rows(n: int = 32, length: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded rows in four layouts (left, right, both sides, unpadded), taken in turn, where a
    real token is the pad id with probability 1/4 (pad == eos). Every row keeps at least one
    real token that is not the pad id. Returns ``(input_ids, attention_mask)``."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.full((n, length), PAD, dtype=torch.long)
    mask = torch.zeros((n, length), dtype=torch.long)

    def draw(low: int, high: int) -> int:  # an integer in [low, high]
        return int(torch.randint(low, high + 1, (1,), generator=generator))

    for row in range(n):
        layout = ("left", "right", "both", "none")[row % 4]
        most = {"left": length - 1, "right": length - 1, "both": length - 2, "none": length}[layout]
        size = length if layout == "none" else draw(1, most)
        start = {"left": length - size, "right": 0, "none": 0}.get(layout, 0)
        if layout == "both":  # drawn only here, so the other layouts take no number from the generator
            start = draw(1, length - size - 1)
        content = torch.randint(1, 32, (size,), generator=generator)
        inside = torch.rand(size, generator=generator) < 0.25
        content[inside] = PAD
        if (content == PAD).all():
            content[draw(0, size - 1)] = draw(1, 31)
        ids[row, start : start + size] = content
        mask[row, start : start + size] = 1
    return ids, mask


def batches() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The batches every forward runs on: the reproduction, claim 2's left- and right-padded
    batches (rows of two lengths), the review table's four rows, and the random rows."""
    return {
        "reproduction": as_batch(("left", "right")),
        "left-padded": as_batch(("left", "unpadded")),
        "right-padded": as_batch(("right", "unpadded")),
        "review": as_batch(REVIEW_TABLE),
        "random": random_rows(),
    }


@torch.no_grad()
def _reference(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``model.forward``'s logits, and its score head's logits at every position."""
    seen: dict[str, torch.Tensor] = {}
    hook = model.score.register_forward_hook(lambda module, args, out: seen.update(every=out))
    try:
        logits = model(input_ids=ids, attention_mask=mask).logits
    finally:
        hook.remove()
    return logits, seen["every"]


def _pooled_from(logits: torch.Tensor, every: torch.Tensor) -> list[list[int]]:
    """Per row, every position whose logits these are (within ATOL). Usually one; masked pad
    positions can share the same logits, and then all of them are listed."""
    distance = (every - logits[:, None, :]).abs().amax(-1)
    return [(row <= ATOL).nonzero().flatten().tolist() for row in distance]


def run_variant(
    forwards: dict[str, Any], models: dict[str, Any], data: dict[str, tuple[torch.Tensor, torch.Tensor]]
) -> dict[str, Any]:
    """``{family: {batch: {"matches": [...], "pooled": [...]}}}`` for one imported tree."""
    out: dict[str, Any] = {}
    for family, forward in forwards.items():
        out[family] = {}
        for name, (ids, mask) in data.items():
            reference, every = _reference(models[family], ids, mask)
            logits = forward(models[family], ids, mask)
            matches = ((logits - reference).abs().amax(-1) <= ATOL).tolist()
            out[family][name] = {"matches": matches, "pooled": _pooled_from(logits, every)}
    return out


def _import_tree(tree: str) -> tuple[str, bool, dict[str, Any]]:
    from pp_demo.colossalai import forwards

    forwards.forget_imported_tree()
    sys.path = [p for p in sys.path if p != tree]
    sys.path.insert(0, tree)
    # the nightly prints a "please install" line when imported from source: keep stdout clean
    with contextlib.redirect_stdout(sys.stderr):
        import colossalai
    inside = pathlib.Path(colossalai.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve())
    return colossalai.__version__, inside, forwards.forwards_in_tree()


def main(job_path: str, out_path: str) -> None:
    from pp_demo.pipeline.families import build_model

    job = json.loads(pathlib.Path(job_path).read_text())
    data = batches()
    models = {}
    result = {"sdist": job["sdist"], "variants": {}}
    for variant, tree in job["trees"].items():
        version, inside, forwards = _import_tree(tree)
        for family in forwards:
            if family not in models:
                models[family] = build_model(family, attn_implementation=ATTENTION.get(family)).eval()
        result["variants"][variant] = {
            "tree": f"sdist {job['sdist']}, variant {variant}",
            "colossalai.__version__": version,
            "colossalai.__file__ inside the tree": inside,
            "families": run_variant(forwards, models, data),
        }
    pathlib.Path(out_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:3])
