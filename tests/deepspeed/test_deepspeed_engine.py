"""The workbook's stages on DeepSpeed's pipeline engine (two CPU ranks, gloo) for three families.

The ranks start once for every case of this file (DeepSpeed's import is the cost). Which rows a
rule gets right comes from the review table (``review_table.MATCHES_FORWARD``), each row judged
against the unsplit model's own forward; the training losses against the workbook's in-process
pipeline training the same model, which runs no DeepSpeed code.
"""

import pytest
import torch
from review_table import COUNT_RULE_MATCHES_SIX, FIVE_ROWS, MATCHES_FORWARD, SIX_ROWS

from pp_demo.core import FIX, as_batch, build_model
from pp_demo.deepspeed import NOT_INSTALLED, missing
from pp_demo.deepspeed.on_rank import EngineCase
from pp_demo.deepspeed.reproduce import run_on_deepspeed
from pp_demo.ranks.jobs import Job
from pp_demo.ranks.runner import run
from pp_demo.verify.compare import compare_rows, forward_logits

pytestmark = [pytest.mark.distributed, pytest.mark.skipif(missing() is not None, reason=NOT_INSTALLED)]

FAMILIES = ("llama", "qwen2", "opt")
RULES = ("count", FIX)
LABELS = torch.tensor([0, 2])  # of the left- and the right-padded row
STEPS, LR = 3, 1e-2


def _eval_cases():
    ids, mask = as_batch(FIVE_ROWS)
    cases = {(f, r, 1): EngineCase(f, r, ids, mask) for f in FAMILIES for r in RULES}
    six_ids, six_mask = as_batch(SIX_ROWS)
    cases["llama", "count", 2] = EngineCase("llama", "count", six_ids, six_mask, n_micro=2)  # micro-batches of 3 rows
    return cases


def _train_cases():
    ids, mask = as_batch(["left", "right"])
    return {rule: EngineCase("llama", rule, ids, mask, LABELS, steps=STEPS, lr=LR) for rule in RULES}


@pytest.fixture(scope="module")
def answers():
    evals, trains = _eval_cases(), _train_cases()
    found = run_on_deepspeed([*evals.values(), *trains.values()], timeout_s=300)
    return dict(zip([*evals, *trains], found, strict=True)), evals


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("rule", RULES)
def test_each_rule_matches_model_forward_on_the_rows_the_review_table_says(answers, family, rule):
    found, cases = answers
    case = cases[family, rule, 1]
    reference = forward_logits(build_model(family), case.input_ids, case.attention_mask)
    assert compare_rows(found[family, rule, 1], reference, 1e-6).matches == MATCHES_FORWARD[rule]


def test_the_count_rule_misses_the_left_padded_rows_in_micro_batches_too(answers):
    found, cases = answers
    case = cases["llama", "count", 2]
    reference = forward_logits(build_model("llama"), case.input_ids, case.attention_mask)
    assert compare_rows(found["llama", "count", 2], reference, 1e-6).matches == COUNT_RULE_MATCHES_SIX


@pytest.mark.parametrize("rule", RULES)
def test_train_batch_steps_equal_the_workbook_s_own_training(answers, rule):
    found, _ = answers
    ids, mask = as_batch(["left", "right"])
    (trained,) = run([Job.train(build_model("llama"), [(ids, mask, LABELS)] * STEPS, lr=LR, rule=rule)])
    assert found[rule] == pytest.approx(trained.losses, abs=1e-5)
    assert len(set(found[rule])) == STEPS  # the weights moved each step


def test_the_two_rules_train_apart(answers):
    found, _ = answers
    assert found["count"][0] != pytest.approx(found[FIX][0], abs=1e-4)  # the left row's loss is read elsewhere
