"""The same stages as two real ranks (gloo, two processes): exact, shape-safe, failure-safe.

All the exactness cases share one start of the two ranks (a start costs seconds);
every run is bounded by ``run_distributed``'s timeout, so no test can hang.
"""

import os
import subprocess
import sys
import time

import pytest
import torch

from pp_demo.cases import as_batch
from pp_demo.compare import forward_logits
from pp_demo.distributed import Fault, Job, PipelineError, check_world_size, run_distributed, run_under_torchrun
from pp_demo.families import build_model
from pp_demo.local import pipeline_logits

FAMILIES = ["llama", "qwen2", "opt"]
ROWS = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded", "left"]
LABELS = torch.tensor([0, 1, 2, 0, 1, 2])
COUNT_RULE_MATCHES = [False, True, False, False, True, False]   # as in test_stages.py, from the review table


def _jobs():
    ids, mask = as_batch(ROWS)
    jobs = {}
    for family in FAMILIES:
        model = build_model(family)
        jobs[family, "fix"] = Job(model, ids, mask, n_micro=2)
        jobs[family, "count"] = Job(model, ids, mask, rule="count", n_micro=3, split_at=1)
        jobs[family, "train"] = Job(model, ids, mask, labels=LABELS, n_micro=2)
        jobs[family, "train3"] = Job(model, ids, mask, labels=LABELS, n_micro=3, split_at=3)
        # the engine's shape trap: after the first step, another length and a bigger batch
        jobs[family, "shorter"] = Job(model, ids[:, 2:], mask[:, 2:], n_micro=2)
        jobs[family, "bigger"] = Job(model, ids.repeat(2, 1), mask.repeat(2, 1), n_micro=2)
    return jobs


@pytest.fixture(scope="module")
def runs():
    jobs = _jobs()
    results = run_distributed(jobs.values(), timeout_s=300)
    return {key: (job, result) for (key, job), result in zip(jobs.items(), results)}


def _max_diff(a, b):
    return float((a - b).abs().max())


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("case", ["fix", "shorter", "bigger"])
def test_distributed_logits_equal_the_in_process_run_and_model_forward(runs, family, case):
    job, result = runs[family, case]
    assert result.logits.shape == (job.input_ids.shape[0], 3)
    reference = forward_logits(job.model, job.input_ids, job.attention_mask)
    local = pipeline_logits(job.model, job.input_ids, job.attention_mask, n_micro=job.n_micro)
    assert _max_diff(result.logits, reference) <= 1e-6
    assert _max_diff(result.logits, local) <= 1e-6


@pytest.mark.parametrize("family", FAMILIES)
def test_distributed_count_rule_misses_the_same_rows_as_in_process(runs, family):
    job, result = runs[family, "count"]
    reference = forward_logits(job.model, job.input_ids, job.attention_mask)
    matches = ((result.logits - reference).abs().amax(-1) <= 1e-6).tolist()
    assert matches == COUNT_RULE_MATCHES


def _one_process_step(model, ids, mask, labels):
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return float(loss.detach()), grads


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("case", ["train", "train3"])
def test_a_training_step_gives_the_loss_and_gradients_of_one_process(runs, family, case):
    job, result = runs[family, case]
    loss, grads = _one_process_step(job.model, job.input_ids, job.attention_mask, job.labels)
    assert abs(result.loss - loss) <= 1e-6
    assert set(result.grads) == set(grads)
    assert max(_max_diff(result.grads[name], grads[name]) for name in grads) <= 1e-6


def test_a_batch_that_does_not_split_evenly_is_refused_before_any_rank_starts():
    ids, mask = as_batch(ROWS[:5])
    with pytest.raises(ValueError, match="5 rows cannot be split into 2 equal micro-batches"):
        run_distributed([Job(build_model("llama"), ids, mask, n_micro=2)])


def test_a_missing_mask_is_refused_because_none_cannot_travel():
    ids, _ = as_batch(ROWS)
    with pytest.raises(ValueError, match="attention_mask"):
        run_distributed([Job(build_model("llama"), ids, None)])


@pytest.mark.parametrize("fault, message", [
    (Fault(rank=1, how="raise"), "rank 1 failed: RuntimeError: fault injected at micro-batch 1"),
    (Fault(rank=0, how="kill"), "rank 0 was killed by SIGKILL mid-schedule"),
    (Fault(rank=1, how="hang"), "did not finish within 30 s"),
])
def test_a_failing_rank_becomes_a_clear_error_in_bounded_time(fault, message):
    # the limit leaves room for two processes importing torch and transformers on a
    # busy 2-core machine; a raise or a kill ends the run long before it
    ids, mask = as_batch(ROWS)
    start = time.monotonic()
    with pytest.raises(PipelineError, match=message):
        run_distributed([Job(build_model("llama"), ids, mask, n_micro=3, fault=fault)], timeout_s=30)
    assert time.monotonic() - start < 90


def test_a_world_size_other_than_two_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="needs exactly 2 ranks, got 3"):
        check_world_size(3)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(ValueError, match="got 4"):
        run_under_torchrun([])


EXPECTED_LINES = [
    f"{'llama':<8} {'count':<18} row matches model.forward: [False, True]",
    f"{'llama':<8} {'rightmost_non_pad':<18} row matches model.forward: [True, True]",
]


def test_cli_reproduce_distributed_prints_the_same_lines(capsys):
    from pp_demo.cli import main

    assert main(["reproduce", "--distributed", "--family", "llama"]) == 0
    out = capsys.readouterr().out
    assert "two ranks on torch.distributed.pipelining" in out
    assert [l for l in out.splitlines() if "row matches" in l] == EXPECTED_LINES


def test_torchrun_runs_the_cli_as_two_ranks_and_only_one_prints():
    # --standalone: a local rendezvous on a free port torchrun picks itself
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                "-m", "pp_demo", "reproduce", "--distributed", "--family", "llama"]
    done = subprocess.run(torchrun, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert [l for l in done.stdout.splitlines() if "row matches" in l] == EXPECTED_LINES
    assert done.stdout.count("judged by the true last real token") == 1
