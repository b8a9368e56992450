"""What the engine does on real ranks (gloo, two and three): the order ``pp_demo.ranks.schedules``
writes down is the one it runs, recorded by hooks on each rank's stage during a training
step; and a stage reused for another length never gives ``model.forward``'s logits: its
hidden states arrive in the first step's shape while the ids and mask have the new one, and
the last stage fails on the mismatch (which is why ``pp_demo.ranks.on_rank`` builds one
stage per shape, and notebook 10 shows the trap)."""

import re

import pytest
import torch

from pp_demo.ranks.engine_probes import OrderProbe, ShapeTrapProbe
from pp_demo.ranks.runner import run
from pp_demo.ranks.schedules import schedule_order

CASES = [(kind, p, m) for p in (2, 3) for kind in ("gpipe", "1f1b") for m in (p, 5)]


@pytest.fixture(scope="module")
def recorded():
    probes = [OrderProbe(kind, p, m) for kind, p, m in CASES] + [ShapeTrapProbe()]
    results = run(probes, on="ranks", timeout_s=300)  # one start per stage count
    return dict(zip(CASES + ["trap"], results, strict=True))


@pytest.mark.parametrize("kind, p, m", CASES)
def test_each_rank_runs_its_forwards_and_backwards_in_the_written_order(recorded, kind, p, m):
    assert recorded[kind, p, m] == schedule_order(kind, p, m)


def test_a_stage_reused_for_another_shape_fails_on_a_rank_and_returns_no_logits(recorded):
    trap = recorded["trap"]
    assert tuple(trap["input_ids"].shape) == (9, 4)
    assert trap["logits"] is None
    # torch 2.11: rank 0's engine refuses its stage's output against the shape it fixed;
    # 2.13 and later: rank 1's layers get hidden states of the (6, 6) step's shape and the (9, 4) mask
    refused = r"rank 0: PipeliningShapeError: Stage 0 forward outputs: value 0 has a shape mismatch"
    # the old length 6 against the new batch (9) or length (4), whichever the layers meet first
    # (transformers 4.51.3 and 5.x build the attention mask differently)
    mismatch = r"rank 1: RuntimeError: The size of tensor a \(6\) must match the size of tensor b \((9|4)\)"
    assert re.match(f"{refused}|{mismatch}", trap["error"])
    if torch.__version__ >= (2, 13):  # TorchVersion compares as a release
        assert re.match(mismatch, trap["error"])
