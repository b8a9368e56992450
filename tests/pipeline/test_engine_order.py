"""What the engine does on real ranks (gloo, two and three): the order ``pp_demo.pipeline.schedules``
writes down is the one it runs, recorded by hooks on each rank's stage during a training
step; and a stage reused for another length gives wrong logits without an error (which is
why ``pp_demo.pipeline.on_rank`` builds one stage per shape, and notebook 02 shows the trap)."""

import pytest

from pp_demo.pipeline.engine_probes import OrderProbe, ShapeTrapProbe
from pp_demo.pipeline.families import build_model
from pp_demo.pipeline.runner import run
from pp_demo.pipeline.schedules import schedule_order
from pp_demo.verify.compare import forward_logits

CASES = [(kind, p, m) for p in (2, 3) for kind in ("gpipe", "1f1b") for m in (p, 5)]


@pytest.fixture(scope="module")
def recorded():
    probes = [OrderProbe(kind, p, m) for kind, p, m in CASES] + [ShapeTrapProbe()]
    results = run(probes, on="ranks", timeout_s=300)  # one start per stage count
    return dict(zip(CASES + ["trap"], results, strict=True))


@pytest.mark.parametrize("kind, p, m", CASES)
def test_each_rank_runs_its_forwards_and_backwards_in_the_written_order(recorded, kind, p, m):
    assert recorded[kind, p, m] == schedule_order(kind, p, m)


def test_a_stage_reused_for_a_shorter_length_returns_wrong_logits_and_no_error(recorded):
    trap = recorded["trap"]
    assert tuple(trap["input_ids"].shape) == (6, 4)
    reference = forward_logits(build_model("llama"), trap["input_ids"], trap["attention_mask"])
    assert trap["logits"].shape == reference.shape
    assert (trap["logits"] - reference).abs().max() > 1e-3
