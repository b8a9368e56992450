"""The split into stages, run in one process, against model.forward (the reference).

Exactness: with the fix, every row equals model.forward within 1e-6 (fp32, CPU).
With the count rule (ColossalAI 0.5.0's Llama, Qwen2, OPT), exactly the rows where
count - 1 differs from the rightmost non-pad token differ; those are written below
from the review table, not computed by the code under test.
"""

import pytest
import torch
import transformers
from review_table import COUNT_RULE_MATCHES_SIX, SIX_ROWS

from pp_demo.core import LastStage, MiddleStage, as_batch, build_model, get_family, pipeline_logits, split_model
from pp_demo.ranks.jobs import even_split_points
from pp_demo.verify.compare import compare_rows, forward_logits

FAMILIES = ["llama", "qwen2", "opt"]
ROWS = SIX_ROWS
COUNT_RULE_MATCHES = COUNT_RULE_MATCHES_SIX  # from the review table (tests/review_table.py)


@pytest.fixture(scope="module", params=FAMILIES)
def model(request):
    return build_model(request.param)


@pytest.fixture(scope="module")
def batch():
    return as_batch(ROWS)


@pytest.mark.parametrize("split_points", [1, 3, (1, 3), (1, 2, 3)])
@pytest.mark.parametrize("n_micro", [1, 3, 6])
def test_fix_equals_model_forward_on_every_row(model, batch, split_points, n_micro):
    ids, mask = batch
    logits = pipeline_logits(model, ids, mask, rule="rightmost_non_pad", split_points=split_points, n_micro=n_micro)
    diff = (logits - forward_logits(model, ids, mask)).abs().amax(-1)
    assert diff.max() <= 1e-6


@pytest.mark.parametrize("split_points", [1, (1, 2), (1, 2, 3)])
@pytest.mark.parametrize("n_micro", [1, 2])
def test_count_rule_differs_exactly_where_count_is_not_the_rightmost_non_pad(model, batch, split_points, n_micro):
    ids, mask = batch
    logits = pipeline_logits(model, ids, mask, rule="count", split_points=split_points, n_micro=n_micro)
    result = compare_rows(logits, forward_logits(model, ids, mask), atol=1e-6)
    assert result.matches == COUNT_RULE_MATCHES
    # a miss is a different token's logits, not rounding: far above the tolerance
    assert min(d for d, ok in zip(result.max_abs_diff, result.matches, strict=True) if not ok) > 1e-3


# ---- the seed's test, ported: left- and right-padded batches, parametrized over the rule
LEFT_PADDED = torch.tensor([[0, 0, 5, 6, 7, 8], [0, 5, 6, 7, 8, 9]])
RIGHT_PADDED = torch.tensor([[5, 6, 7, 8, 0, 0], [5, 6, 7, 8, 9, 0]])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "rule, left_matches, right_matches",
    [
        ("rightmost_non_pad", [True, True], [True, True]),
        ("count", [False, False], [True, True]),  # the old code fails this test on left padding
    ],
)
def test_pipeline_matches_model_forward_per_padding_side(family, rule, left_matches, right_matches):
    model = build_model(family)
    for ids, expected in [(LEFT_PADDED, left_matches), (RIGHT_PADDED, right_matches)]:
        mask = (ids != 0).long()
        logits = pipeline_logits(model, ids, mask, rule=rule)
        assert compare_rows(logits, forward_logits(model, ids, mask), atol=1e-6).matches == expected


# ---- what each stage holds
def test_stages_split_the_layers_and_share_the_models_parameters():
    model = build_model("llama")
    stages = split_model(model, split_points=1)
    assert len(stages.first.body.layers) == 1 and len(stages.last.body.layers) == 3
    assert isinstance(stages.first.body.norm, torch.nn.Identity)
    assert stages.last.body.norm is not None and not isinstance(stages.last.body.norm, torch.nn.Identity)
    model_params = {id(p) for p in model.parameters()}
    assert {id(p) for p in stages.first.parameters()} <= model_params
    assert {id(p) for p in stages.last.parameters()} <= model_params
    assert stages.last.score is model.score


def test_four_stages_hold_one_layer_each_in_model_order():
    model = build_model("gpt2")
    stages = split_model(model, [1, 2, 3])
    assert len(stages) == 4 and stages.split_points == (1, 2, 3)
    assert [type(s) for s in stages][1:] == [MiddleStage, MiddleStage, LastStage]
    assert [s.body.h[0] for s in stages] == list(model.transformer.h)
    middle = stages[1].body
    # a middle stage neither adds the learned positions again nor applies the final norm
    assert not isinstance(middle.wpe, torch.nn.Embedding) and isinstance(middle.ln_f, torch.nn.Identity)


def test_splitting_leaves_the_model_unchanged():
    model = build_model("opt")
    ids, mask = as_batch(ROWS)
    before = forward_logits(model, ids, mask)
    split_model(model, split_points=(1, 2))
    assert torch.equal(forward_logits(model, ids, mask), before)


def test_split_defaults_to_half_the_layers_and_an_int_means_two_stages():
    stages = split_model(build_model("qwen2"))
    assert (stages.split_points, stages.num_layers, len(stages)) == ((2,), 4, 2)
    assert split_model(build_model("qwen2"), 3).split_points == (3,)


@pytest.mark.parametrize("n_stages, points", [(2, (2,)), (3, (1, 3)), (4, (1, 2, 3))])
def test_even_split_points_give_each_stage_a_share_of_four_layers(n_stages, points):
    assert even_split_points(4, n_stages) == points


@pytest.mark.parametrize("n_stages", [1, 5])
def test_a_stage_count_the_layers_cannot_hold_is_refused(n_stages):
    with pytest.raises(ValueError, match=f"a model with 4 layers splits into 2..4 stages, got {n_stages}"):
        even_split_points(4, n_stages)


def test_a_missing_mask_means_every_token_is_real():
    model = build_model("llama")
    ids = torch.tensor([[5, 6, 7, 8], [9, 8, 7, 6]])
    logits = pipeline_logits(model, ids, split_points=(1, 2))
    assert torch.allclose(logits, forward_logits(model, ids, torch.ones_like(ids)), atol=1e-6, rtol=0)


# ---- bad input: a clear error, never garbage
def test_batch_not_divisible_by_micro_batches_is_refused():
    ids, mask = as_batch(ROWS[:5])
    with pytest.raises(ValueError, match="5 rows cannot be split into 2 equal micro-batches"):
        pipeline_logits(build_model("llama"), ids, mask, n_micro=2)


def test_no_pad_id_with_several_rows_is_refused():
    model = build_model("llama", pad_token_id=None)
    ids, mask = as_batch(["left", "right"])
    with pytest.raises(ValueError, match="pad_token_id is None"):
        pipeline_logits(model, ids, mask)


@pytest.mark.parametrize("points", [0, 4, -1, 2.0, True, [], [2, 2], [3, 1], [1, 2, 3, 4], [0, 2], "1"])
def test_split_points_outside_the_layers_or_out_of_order_are_refused(points):
    with pytest.raises(
        ValueError,
        match=r"split points must be strictly increasing ints in 1\.\.3 for a model "
        r"with 4 layers .*, got",
    ):
        split_model(build_model("llama"), points)


def test_unsupported_family_names_the_supported_ones():
    with pytest.raises(ValueError, match="supported: llama, qwen2, opt"):
        get_family("t5")


def test_unsupported_model_class_names_the_supported_ones():
    config = transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2
    )
    with pytest.raises(ValueError, match="unsupported model class LlamaForCausalLM.*LlamaForSequenceClassification"):
        split_model(transformers.LlamaForCausalLM(config))


def test_unknown_rule_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="unknown pooling rule"):
        split_model(build_model("llama"), rule="last_token")
