"""ColossalAI 0.5.0's own pipeline forwards against pp_demo's pipeline, row by row (notebook 06).

Nothing here skips. ColossalAI is installed by `make colossalai`, which `make test` runs; when
it is missing, the import below fails this file loudly. It requires transformers 4.51.3, so
the transformers 5.x leg (`make test-transformers5`) leaves this file out.
"""

import pathlib

import colossalai  # a plain import: a missing ColossalAI is an error here, never a skip
import pytest
import torch
import transformers
from review_table import COLOSSALAI_RULE, FIVE_ROWS, MATCHES_FORWARD

from pp_demo.colossalai.forwards import FORWARDS, call_one_stage, colossalai_forward, colossalai_forwards
from pp_demo.core import as_batch, build_model, get_family, pipeline_logits
from pp_demo.verify.checker.judge import check_forward
from pp_demo.verify.compare import compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance

ROOT = pathlib.Path(__file__).resolve().parents[2]
ATOL = tolerance("cpu")  # CPU fp32: the shared tolerance
ROWS = FIVE_ROWS
EXPECTED = MATCHES_FORWARD  # from the review table (tests/review_table.py)
RULES = {family: rule for family, rule in COLOSSALAI_RULE.items() if rule != "rightmost_non_pad"}

# GPT-2 under sdpa (transformers' default) differs from model.forward for another reason
# than pooling (test_gpt2_under_sdpa_attends_to_later_tokens): its pooling is compared on eager.
POOLING_ATTENTION = {"gpt2": "eager"}


def _model(family):
    return build_model(family, attn_implementation=POOLING_ATTENTION.get(family))


def _pins():
    lines = (ROOT / "constraints" / "pinned.txt").read_text().splitlines()
    return dict(line.split("#")[0].strip().split("==") for line in lines if "==" in line.split("#")[0])


def test_the_installed_colossalai_is_the_pinned_release_and_left_the_stack_as_pinned():
    pins = _pins()
    assert colossalai.__version__ == pins["colossalai"] == "0.5.0"
    assert transformers.__version__ == pins["transformers"] == "4.51.3"
    assert torch.__version__.split("+")[0] == pins["torch"]  # --no-deps kept its torch pin out


def test_the_eight_forwards_and_their_rules():
    assert sorted(colossalai_forwards()) == sorted(FORWARDS) == sorted(RULES)
    assert {family: get_family(family).colossalai_rule for family in FORWARDS} == RULES


@pytest.mark.parametrize("family", list(RULES))
def test_colossalai_equals_pp_demo_with_its_rule_row_by_row(family):
    model = _model(family)
    ids, mask = as_batch(ROWS)
    ours = colossalai_forwards()[family](model, ids, mask)
    same_rule = pipeline_logits(model, ids, mask, rule=RULES[family])
    assert compare_rows(ours, same_rule, ATOL).matches == [True] * len(ROWS)
    assert compare_rows(ours, forward_logits(model, ids, mask), ATOL).matches == EXPECTED[RULES[family]]
    fixed = pipeline_logits(model, ids, mask, rule="rightmost_non_pad")
    assert compare_rows(fixed, forward_logits(model, ids, mask), ATOL).matches == [True] * len(ROWS)


@pytest.mark.parametrize("family", list(RULES))
@pytest.mark.parametrize(
    "rows", [["left"], ["right_pad_in_content"], ["trailing_eos"], ["all_pad", "unpadded", "right", "left"]]
)
def test_colossalai_equals_pp_demo_on_other_batches(family, rows):
    # one-row batches (Bloom and Falcon take the batch size from the placeholder), a row
    # ending in a real eos equal to pad, and an all-pad row
    model = _model(family)
    ids, mask = as_batch(rows)
    ours = colossalai_forward(model, ids, mask)
    assert compare_rows(ours, pipeline_logits(model, ids, mask, rule=RULES[family]), ATOL).all_match


def test_a_miss_is_a_wrong_token_not_noise():
    model = _model("llama")
    ids, mask = as_batch(ROWS)
    diff = compare_rows(colossalai_forward(model, ids, mask), forward_logits(model, ids, mask), ATOL)
    assert min(d for d, ok in zip(diff.max_abs_diff, diff.matches, strict=True) if not ok) > 0.01


def test_the_checker_names_the_count_rule_for_colossalai_llama():
    report = check_forward(build_model("llama"), colossalai_forward, lengths=(5,), batch_sizes=(4,))
    assert not report.passed and report.consistent_rules == ["count"]


def test_a_forward_refuses_another_family():
    with pytest.raises(ValueError, match="ColossalAI's llama forward"):
        colossalai_forwards()["llama"](build_model("opt"), *as_batch(["left"]))


# ---- the divergence that is not pooling: GPT-2 under sdpa


def _gpt2_body(model, ids, mask):
    from colossalai.shardformer.modeling.gpt2 import GPT2PipelineForwards

    out = call_one_stage(GPT2PipelineForwards.gpt2_model_forward, model.transformer, model.config.n_layer, ids, mask)
    return out.last_hidden_state


def _non_causal_twin(model):
    """The same GPT-2 with eager attention whose causal mask lets every position see every other."""
    twin = build_model("gpt2", attn_implementation="eager")
    twin.load_state_dict(model.state_dict())
    for block in twin.transformer.h:
        block.attn.bias.fill_(True)
    return twin


def test_gpt2_under_sdpa_differs_on_every_row_even_unpadded():
    model = build_model("gpt2")  # transformers' default attention for GPT-2: sdpa
    assert model.config._attn_implementation == "sdpa"
    ids, mask = as_batch(ROWS)
    ours = colossalai_forward(model, ids, mask)
    assert compare_rows(ours, forward_logits(model, ids, mask), ATOL).matches == [False] * len(ROWS)
    assert compare_rows(ours, pipeline_logits(model, ids, mask, rule="first_pad_mod"), ATOL).matches == [False] * len(
        ROWS
    )


def test_gpt2_under_sdpa_attends_to_later_tokens():
    # the cause: ColossalAI passes a padding-only mask (batch, 1, 1, L); eager GPT-2 adds
    # causality from its own buffer, sdpa is handed a mask and so runs non-causal
    ids, mask = as_batch(["unpadded"])
    later = ids.clone()
    later[0, -1] = 11
    with torch.no_grad():
        sdpa, eager = build_model("gpt2", attn_implementation="sdpa"), build_model("gpt2", attn_implementation="eager")
        assert not torch.equal(_gpt2_body(sdpa, ids, mask)[0, 0], _gpt2_body(sdpa, later, mask)[0, 0])
        assert torch.equal(_gpt2_body(eager, ids, mask)[0, 0], _gpt2_body(eager, later, mask)[0, 0])
        rows, rows_mask = as_batch(ROWS)
        twin = _non_causal_twin(sdpa)
        expected = twin.transformer(input_ids=rows, attention_mask=rows_mask).last_hidden_state
        assert (_gpt2_body(sdpa, rows, rows_mask) - expected).abs().max() <= ATOL


def test_gpt2_under_eager_matches_model_forward_on_an_unpadded_row():
    model = build_model("gpt2", attn_implementation="eager")
    ids, mask = as_batch(["unpadded", "unpadded"])
    assert compare_rows(colossalai_forward(model, ids, mask), forward_logits(model, ids, mask), ATOL).all_match


@pytest.mark.parametrize("family", ["llama", "qwen2", "opt", "falcon", "mistral"])
def test_the_other_families_have_no_such_divergence_under_sdpa(family):
    model = build_model(family, attn_implementation="sdpa")
    ids, mask = as_batch(ROWS)
    ours = colossalai_forward(model, ids, mask)
    assert compare_rows(ours, pipeline_logits(model, ids, mask, rule=RULES[family]), ATOL).all_match


@pytest.mark.parametrize("family", ["bloom", "gptj"])
def test_bloom_and_gptj_have_no_sdpa_in_transformers_4_51_3(family):
    with pytest.raises(ValueError, match="scaled_dot_product_attention"):
        build_model(family, attn_implementation="sdpa")
    assert build_model(family).config._attn_implementation == "eager"


def test_the_cuda_set_device_no_op_is_undone():
    real = torch.cuda.set_device
    colossalai_forward(_model("opt"), *as_batch(["left"]))
    assert torch.cuda.set_device is real
