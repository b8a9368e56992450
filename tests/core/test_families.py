"""All nine families of ColossalAI's shardformer sequence-classification forwards.

Judged by model.forward (exactness). Expected matches are written from the review
table: the count rule (llama, qwen2, opt) is wrong where count - 1 is not the rightmost
non-pad id (left, left_pad_in_content, right_pad_in_content); the first-pad rule
(gpt2, bloom, falcon, gptj wrapped, mistral unwrapped) only on right_pad_in_content,
where a pad id sits among the real tokens and stops it at position 0.
"""

import itertools

import pytest
from review_table import COLOSSALAI_RULE, MATCHES_FORWARD

from pp_demo.core import FAMILIES, as_batch, build_model
from pp_demo.pooling.survey import PROJECTOR_WIDTH
from pp_demo.ranks.jobs import Job
from pp_demo.ranks.runner import run
from pp_demo.verify.compare import compare_rows, forward_logits
from pp_demo.verify.family_matrix import format_matrix, pipeline_matrix

ALL = list(FAMILIES)
SIX = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded", "all_pad"]
TRAILING = ["trailing_eos"]
EXPECTED = MATCHES_FORWARD  # per rule, on FIVE_ROWS, from the review table (tests/review_table.py)
# every way to cut 4 layers into 2, 3 or 4 stages of at least one layer each
ALL_SPLITS = [points for k in (1, 2, 3) for points in itertools.combinations((1, 2, 3), k)]


def test_the_family_table_has_the_nine_families_of_the_seed_directory():
    assert sorted(FAMILIES) == sorted(COLOSSALAI_RULE)
    assert {f: FAMILIES[f].colossalai_rule for f in FAMILIES} == COLOSSALAI_RULE


@pytest.mark.parametrize(
    "attn, splits",
    [(None, ALL_SPLITS), ("eager", [(2,), (1, 3), (1, 2, 3)])],
    ids=["default-attention-every-split", "eager"],
)
@pytest.mark.parametrize("family", ALL)
def test_fix_equals_model_forward_at_every_split_into_two_three_and_four_stages(family, attn, splits):
    model = build_model(family, attn_implementation=attn)
    batches = [as_batch(SIX), as_batch(TRAILING)]
    jobs = [Job.infer(model, ids, mask, split_points=points) for points in splits for ids, mask in batches]
    for job, result in zip(jobs, run(jobs, on="process"), strict=True):
        reference = forward_logits(model, job.batch.input_ids, job.batch.attention_mask)
        assert float((result.logits - reference).abs().max()) <= 1e-6, job.split_points


@pytest.mark.parametrize("family", [f for f in ALL if COLOSSALAI_RULE[f]])  # those with a ColossalAI forward
def test_colossalai_rule_misses_exactly_the_rows_the_review_table_predicts_at_every_split(family):
    model = build_model(family)
    ids, mask = as_batch(SIX[:5])
    rule = COLOSSALAI_RULE[family]
    reference = forward_logits(model, ids, mask)
    jobs = [Job.infer(model, ids, mask, rule=rule, split_points=points) for points in ALL_SPLITS]
    for job, result in zip(jobs, run(jobs, on="process"), strict=True):
        assert compare_rows(result.logits, reference, atol=1e-6).matches == EXPECTED[rule], job.split_points


def test_the_matrix_marks_each_family_rule_and_case():
    table = pipeline_matrix(["gpt2", "mistral", "llama"], SIX[:5])
    for family, rule in [
        ("gpt2", "first_pad_mod"),
        ("mistral", "first_pad"),
        ("llama", "count"),
        ("gpt2", "rightmost_non_pad"),
    ]:
        assert [table[family, rule, case] for case in SIX[:5]] == EXPECTED[rule]
    text = format_matrix(table)
    assert text.startswith("judged by model.forward")
    assert "gpt2    first_pad_mod         ✓      ✓           ✓           ✗         ✓" in text
    assert max(len(line) for line in text.splitlines()) <= PROJECTOR_WIDTH  # read off a projector


def test_every_family_as_two_and_three_ranks_equals_model_forward():
    jobs, batches = [], [as_batch(SIX), as_batch(TRAILING)]
    for family in ALL:
        model = build_model(family)
        for points in (2, (1, 3)):  # two ranks, three ranks: one start each for all the jobs
            for ids, mask in batches:
                jobs.append(Job.infer(model, ids, mask, split_points=points, n_micro=2 if ids.shape[0] % 2 == 0 else 1))
            if COLOSSALAI_RULE[family]:  # and its ColossalAI forward's rule, where it has one
                ids, mask = as_batch(SIX[:5])
                jobs.append(Job.infer(model, ids, mask, rule=COLOSSALAI_RULE[family], split_points=points))
    results = run(jobs, on="ranks", timeout_s=300)
    for job, result in zip(jobs, results, strict=True):
        reference = forward_logits(job.model, job.batch.input_ids, job.batch.attention_mask)
        matches = compare_rows(result.logits, reference, atol=1e-6).matches
        expected = EXPECTED[job.rule] if job.rule != "rightmost_non_pad" else [True] * len(matches)
        assert matches == expected, (type(job.model).__name__, job.rule, job.split_points)


def test_cli_families_prints_the_matrix_from_two_ranks(capsys):
    from pp_demo.cli import main

    assert main(["families", "--distributed", "--family", "gpt2", "--cases", "left", "right_pad_in_content"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("judged by model.forward")
    assert [line.split() for line in lines if line.startswith("gpt2 ")] == [
        ["gpt2", "first_pad_mod", "✓", "✗"],
        ["gpt2", "rightmost_non_pad", "✓", "✓"],
    ]


def test_a_family_runs_its_colossalai_rule_then_the_fix_unless_rules_are_chosen():
    from pp_demo.verify.compare import rules_for

    # ColossalAI 0.5.0's rules (DESIGN: llama count, mistral first_pad, gpt2 first_pad_mod); the
    # Qwen3 forward added after 0.5.0 takes the fix, so the fix is run once
    assert rules_for("llama") == ["count", "rightmost_non_pad"]
    assert rules_for("mistral") == ["first_pad", "rightmost_non_pad"]
    assert rules_for("gpt2") == ["first_pad_mod", "rightmost_non_pad"]
    assert rules_for("qwen3") == ["rightmost_non_pad"]
    assert rules_for("llama", ["first_pad", "first_pad"]) == ["first_pad"]
    with pytest.raises(ValueError, match="unsupported family"):
        rules_for("t5")
