"""The bug on ColossalAI's own engine: HybridParallelPlugin(pp_size=2), two gloo ranks.

Two rank starts in all, one per tree: the unpatched 0.5.0 sdist and the sdist with the change.
Each runs llama's cases and then a case with an injected fault (a killed rank, a hung rank), so
the fault is reported by the same start. Expected values come from ``model.forward`` (the
reference) and ``pp_demo.core``, not from the engine's code.
"""

import pytest
import torch

from pp_demo.core import FIX, PAD
from pp_demo.instruments.engine.claim import CLAIM, judge_engine
from pp_demo.instruments.engine.cli import tree_folder
from pp_demo.instruments.engine.run import engine_cases, not_run, run_engine
from pp_demo.instruments.pull_request.claims import DOCUMENTED
from pp_demo.pooling.positions import pooled_positions
from pp_demo.records.engine import case_name, verdict_lines

# ColossalAI's engine on two ranks, once per tree: the module's runs take over 20 s on 2 cores
pytestmark = [pytest.mark.distributed, pytest.mark.slow]

BOUND_S = 20
CASES = [c for c in engine_cases(["llama"]) if (c["schedule"], c["mode"]) != ("interleaved", "inference")]


# a pair ColossalAI 0.5.0 cannot run: its OPT policy refuses interleaved stages while boosting
REFUSED = engine_cases(["opt"], ["interleaved"], ["inference"], also_not_run=True)


def _with_fault(how, before=()):
    faulty = dict(CASES[0], fault={"rank": 0, "how": how})
    return [*CASES, *before, faulty]


@pytest.fixture(scope="module")
def unpatched():
    return run_engine(tree_folder("unpatched"), _with_fault("kill", REFUSED), case_timeout_s=BOUND_S)


@pytest.fixture(scope="module")
def change():
    return run_engine(tree_folder("change"), _with_fault("hang"), case_timeout_s=BOUND_S)


def _positions(rule):
    ids = torch.tensor(CASES[0]["input_ids"])
    return (pooled_positions(rule, input_ids=ids, pad_token_id=PAD) % ids.shape[-1]).tolist()


def test_each_run_imported_colossalai_from_its_own_tree(unpatched, change):
    assert unpatched["colossalai.__file__ inside the tree"] is True
    assert change["colossalai.__file__ inside the tree"] is True


def test_unpatched_misses_exactly_the_left_padded_row_and_pools_where_counting_says(unpatched):
    records = unpatched["records"][: len(CASES)]
    assert [case_name(r) for r in records] == [case_name(c) for c in CASES]
    counted = _positions("count")
    for record in records:
        assert record["matches"] == [False, True]  # row 0 is left-padded, row 1 right-padded
        assert all(p in seen for p, seen in zip(counted, record["pooled"], strict=True))
        assert abs(record["loss"] - record["model.forward loss"]) > record["tolerance"]
        if record["mode"] == "training":
            assert record["largest gradient difference"] > 1e-3


def test_with_the_change_logits_loss_and_gradients_equal_model_forward(change):
    records = change["records"]
    assert [case_name(r) for r in records] == [case_name(c) for c in CASES]
    fixed = _positions(FIX)
    for record in records:
        assert record["matches"] == [True, True]
        assert all(p in seen for p, seen in zip(fixed, record["pooled"], strict=True))
        assert abs(record["loss"] - record["model.forward loss"]) <= record["tolerance"] == 1e-6
        if record["mode"] == "training":
            assert record["largest gradient difference"] <= 1e-6
            assert record["parameters with a gradient"] == record["parameters"]  # both stages together


def test_the_verdict_lines_say_what_the_records_say(unpatched, change):
    bad = verdict_lines(unpatched["records"][1])
    good = verdict_lines(change["records"][1])
    assert "row matches model.forward: [False, True]" in bad[0] and "differs" in bad[1] and "differ " in bad[1]
    assert "row matches model.forward: [True, True]" in good[0] and "equal" in good[1]


def test_a_pair_the_plugin_refuses_is_reported_with_the_colossalai_line_and_the_run_goes_on(unpatched):
    refused = unpatched["records"][len(CASES)]
    assert case_name(refused) == "opt interleaved inference"
    assert refused["cannot run"].startswith("AssertionError")
    assert "shardformer/policies/opt.py:463" in refused["cannot run"]
    assert not_run("opt", "interleaved") and "policies/opt.py:463" in not_run("opt", "interleaved")


def test_a_killed_rank_is_reported_with_its_signal_and_case(unpatched):
    assert unpatched["failure"] == f"rank 0 was killed by SIGKILL in case {case_name(CASES[0])}"


def test_a_hung_rank_is_reported_within_the_bound_with_where_the_ranks_wait(change):
    failure = change["failure"]
    assert failure.startswith(f"no rank finished case {case_name(CASES[0])} within {BOUND_S} s")
    assert "rank 1 in" in failure and failure.endswith("both ranks were stopped")


def test_the_fifth_claim_every_stage_got_input_ids_and_only_hidden_states_crossed(unpatched, change):
    ran = {"unpatched": dict(unpatched, failure=None), "change": dict(change, failure=None)}
    ran["unpatched"]["records"] = unpatched["records"][: len(CASES)]
    row = judge_engine("colossalai-0.5.0", ran)
    assert row["claim"] == CLAIM
    assert row["verdict"] == DOCUMENTED
    assert "input_ids on every stage True" in row["seen"] and "input_ids on every stage False" not in row["seen"]
    assert "tensors sent between the ranks: " in row["seen"] and "input_ids" not in row["seen"].split("sent")[-1]


BF16_CASES = engine_cases(["llama", "qwen2", "opt"], ["1f1b"], ["training"])


@pytest.mark.parametrize("tree, rows, equal", [("unpatched", [False, True], False), ("change", [True, True], True)])
def test_in_bf16_the_engine_gives_the_fp32_verdicts(tree, rows, equal):
    # the half-precision tolerance (1e-2) against the bug: the left-padded row, the loss and the
    # gradients differ unpatched and are equal with the change, as in fp32 (docs/colossalai.md)
    ran = run_engine(tree_folder(tree), BF16_CASES, dtype="bf16", case_timeout_s=BOUND_S)
    assert ran["failure"] is None
    for record in ran["records"]:
        assert record["tolerance"] == 1e-2
        assert record["matches"] == rows, case_name(record)
        loss_equal = abs(record["loss"] - record["model.forward loss"]) <= record["tolerance"]
        grads_equal = record["largest gradient difference"] <= record["tolerance"]
        assert loss_equal == grads_equal == equal, case_name(record)
