"""The checker finds every deliberately wrong pooled forward, and passes pp_demo's fix.

Each wrong callable is written here from its description (a legacy rule, shifted by
one, ignoring the mask, the first token); expected verdicts come from the rules'
definitions and the review table, not from the checker.
"""

import pytest
import torch

from pp_demo.core import build_model, pipeline_logits
from pp_demo.ranks.in_process import fixed_pipeline
from pp_demo.verify.checker.judge import assert_matches_forward, check_forward
from pp_demo.verify.tolerances import tolerance


def pipeline(rule):
    return lambda model, ids, mask: pipeline_logits(model, ids, mask, rule=rule)


def pooled_at(position_fn):
    """Score the model's own hidden states at the positions ``position_fn`` picks."""

    def forward(model, ids, mask):
        hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
        return model.score(hidden[torch.arange(ids.shape[0]), position_fn(ids, mask, model.config.pad_token_id)])

    return forward


def rightmost_non_pad(ids, mask, pad):
    return (torch.arange(ids.shape[1]) * (ids != pad)).argmax(-1)


def ignores_the_mask(model, ids, mask):
    hidden = model.base_model(input_ids=ids).last_hidden_state  # pads are attended to
    return model.score(hidden[torch.arange(ids.shape[0]), rightmost_non_pad(ids, mask, model.config.pad_token_id)])


@pytest.fixture(scope="module")
def llama():
    return build_model("llama")


def test_the_fixed_pipeline_passes(llama):
    report = assert_matches_forward(llama, pipeline("rightmost_non_pad"))
    assert report.passed and "rightmost_non_pad" in report.consistent_rules
    assert "count" not in report.consistent_rules


@pytest.mark.parametrize(
    "rule, failing",
    [
        ("count", {"left", "pad_in_content", "pad_equals_eos"}),
        ("first_pad_mod", {"pad_in_content", "pad_equals_eos"}),
        ("first_pad", {"pad_in_content", "pad_equals_eos"}),
    ],
)
def test_each_legacy_rule_is_caught_and_named(llama, rule, failing):
    report = check_forward(llama, pipeline(rule))
    named = {c.name for c in report.cases if not c.passed and not c.name.startswith("random")}
    assert named == failing
    assert rule in report.consistent_rules and "rightmost_non_pad" not in report.consistent_rules


def test_shifted_by_one_is_caught(llama):
    report = check_forward(llama, pooled_at(lambda ids, mask, pad: rightmost_non_pad(ids, mask, pad) - 1))
    assert not report.passed
    left = next(c for c in report.cases if c.name == "left")
    assert left.rows[0].pooled_at == (4,) and left.rows[0].forward_pools == 5
    assert report.consistent_rules == []


def test_ignoring_the_mask_is_caught_as_different_hidden_states(llama):
    report = check_forward(llama, ignores_the_mask)
    left = next(c for c in report.cases if c.name == "left")
    assert not left.rows[0].matches and left.rows[0].pooled_at == ()
    assert "no position (the hidden states differ" in report.summary()
    right = next(c for c in report.cases if c.name == "right")
    assert right.passed  # causal attention: pads after the last real token change nothing before it


def test_pooling_the_first_token_is_caught(llama):
    report = check_forward(llama, pooled_at(lambda ids, mask, pad: torch.zeros(ids.shape[0], dtype=torch.long)))
    assert not report.passed and report.consistent_rules == []
    right = next(c for c in report.cases if c.name == "right")
    assert right.rows[0].pooled_at == (0,)


def test_the_mask_rule_fails_only_where_model_forward_itself_misses_the_real_eos(llama):
    report = check_forward(
        llama,
        pooled_at(lambda ids, mask, pad: (torch.arange(ids.shape[1]) * mask).argmax(-1)),
        lengths=(6,),
        batch_sizes=(2,),
    )
    failing = {c.name for c in report.cases if not c.passed}
    assert "trailing_real_eos" in failing and not {"left", "right", "none", "pad_in_content"} & failing
    eos = next(c for c in report.cases if c.name == "trailing_real_eos").rows[0]
    assert (eos.pooled_at, eos.forward_pools, eos.true_last) == ((3,), 2, 3)


@pytest.mark.parametrize("family", ["gpt2", "opt", "bloom"])
def test_other_families_and_pad_ids(family):
    model = build_model(family, pad_token_id=7)
    assert check_forward(model, pipeline("rightmost_non_pad"), lengths=(9,), batch_sizes=(4,)).passed
    assert not check_forward(model, pipeline("count"), lengths=(9,), batch_sizes=(4,)).passed


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_attention_implementations(llama, attn):
    assert check_forward(
        llama, pipeline("rightmost_non_pad"), attn_implementation=attn, lengths=(9,), batch_sizes=(4,)
    ).passed


def test_a_bf16_model_is_judged_by_the_bf16_tolerance(llama):
    report = check_forward(
        build_model("llama"), pipeline("rightmost_non_pad"), dtype=torch.bfloat16, lengths=(9,), batch_sizes=(4,)
    )
    assert report.atol == tolerance("cpu", torch.bfloat16) == 1e-2
    assert report.passed
    assert not check_forward(
        build_model("llama"), pipeline("count"), dtype=torch.bfloat16, lengths=(9,), batch_sizes=(4,)
    ).passed


def test_bf16_logits_of_an_fp32_model_fail_but_are_reported_as_rounded_at_the_right_position():
    # The hidden states and pooled positions are those of model.forward; only the dtype of
    # the returned logits is coarser. The verdict stays FAIL (1e-6 is the fp32 tolerance),
    # and every failing row must be named as pooled where model.forward pools, only rounded.
    report = check_forward(
        build_model("llama"), lambda m, i, a: fixed_pipeline(m, i, a).to(torch.bfloat16), lengths=(9,), batch_sizes=(4,)
    )
    assert not report.passed
    failing = [row for case in report.cases for row in case.rows if not row.matches]
    assert failing and all(row.rounded_to == "bfloat16" and row.forward_pools in row.pooled_at for row in failing)
    summary = report.summary()
    assert "no position" not in summary
    assert "(the position model.forward pools), only rounded to bfloat16" in summary


def test_a_wrong_pooled_position_is_not_excused_as_rounding():
    # bf16 logits of the count rule: rounding cannot move the pooled position, so the rows
    # where count pools a wrong token must name that token, not model.forward's.
    report = check_forward(
        build_model("llama"),
        lambda m, i, a: pipeline_logits(m, i, a, rule="count").to(torch.bfloat16),
        lengths=(9,),
        batch_sizes=(4,),
    )
    left = next(case for case in report.cases if case.name == "left")
    row = left.rows[0]  # left-padded: count pools before the last real token
    assert not row.matches and row.forward_pools not in row.pooled_at


def true_last_token(ids, mask, pad):
    return (torch.arange(ids.shape[1]) * mask).argmax(-1)


def last_position_one_row_at_a_time(model, ids, mask):
    """What transformers does with no pad id and micro-batches of one row: the last position."""
    return torch.cat([model(input_ids=ids[b : b + 1], attention_mask=mask[b : b + 1]).logits for b in range(len(ids))])


def test_a_model_without_pad_id_is_judged_by_the_true_last_real_token():
    model = build_model("gpt2", pad_token_id=None)
    report = check_forward(model, pooled_at(true_last_token))
    assert report.passed and "true last real token" in report.reference
    assert "all_pad" not in {c.name for c in report.cases}  # no real token: nothing to judge by
    assert "rightmost_attended" in report.consistent_rules


def test_without_pad_id_the_last_position_of_a_right_padded_row_is_caught():
    report = check_forward(build_model("gpt2", pad_token_id=None), last_position_one_row_at_a_time)
    right = next(c for c in report.cases if c.name == "right")
    assert report.exit_code == 1 and not right.passed
    assert right.rows[0].pooled_at == (5,) and right.rows[0].forward_pools == 3  # [x,x,x,x,pad,pad]: true last 3
    assert next(c for c in report.cases if c.name == "left").passed  # left padding ends in the last real token
    assert "the true last real token is 3" in report.summary()


def test_logits_of_the_wrong_shape_are_the_callables_failure(llama):
    report = check_forward(llama, lambda model, ids, mask: torch.zeros(ids.shape[0], 5), cases=["left"])
    assert report.exit_code == 3 and "returned logits of shape (1, 5)" in report.cases[0].failure


def test_the_failure_table_of_the_docs():
    # docs/checker.md, measured on the tiny llama with seed 0: besides the named cases, these
    # rules fail on some random batches too (rows that hold a pad id or end in a real eos)
    random_failures = {"first_pad": 6, "first_pad_mod": 6, "rightmost_attended": 4}
    named = {"first_pad": {"pad_in_content", "pad_equals_eos"}, "rightmost_attended": {"trailing_real_eos"}}
    named["first_pad_mod"] = named["first_pad"]
    llama = build_model("llama")
    for rule, count in random_failures.items():
        report = check_forward(llama, pipeline(rule))
        failing = [c.name for c in report.cases if not c.passed]
        assert {n for n in failing if not n.startswith("random")} == named[rule]
        assert sum(n.startswith("random") for n in failing) == count
    assert report.consistent_rules == ["rightmost_attended", "attended_flip", "attended_cumsum"]


def test_cli_checks_a_callable_by_dotted_path(capsys):
    from pp_demo.cli import main

    assert main(["check", "pp_demo.ranks.in_process:fixed_pipeline", "--family", "gpt2"]) == 0
    assert capsys.readouterr().out.startswith("PASS: 16/16 batches match the reference")
    assert main(["check", "pp_demo.ranks.in_process:count_rule_pipeline", "--family", "llama"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL:") and out.rstrip().endswith("consistent with: count")


def test_cli_checks_a_local_checkpoint_and_the_callable_of_a_users_module(tmp_path, monkeypatch, capsys):
    from pp_demo.cli import main

    build_model("qwen2").save_pretrained(tmp_path / "ckpt")
    (tmp_path / "my_framework.py").write_text(
        "import torch\n"
        "def last_token(model, ids, mask):\n"
        "    hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state\n"
        "    return model.score(hidden[:, -1])\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "my_framework:last_token", "--model-path", str(tmp_path / "ckpt"), "--attn", "eager"]) == 1
    out = capsys.readouterr().out
    assert (
        "  left: " not in out and "  right: rows [0] differ" in out
    )  # last position: right only when no right padding


def test_a_callable_that_is_not_one_is_refused():
    from pp_demo.verify.checker.judge import load_callable

    with pytest.raises(ValueError, match="package.module:function"):
        load_callable("nodots")
    with pytest.raises(ValueError, match="not a callable"):
        load_callable("pp_demo.core:RULES")
