"""One home per check: the same fault gives the same error, class and line, wherever a
user meets it: the pipeline and the rules' door, the reproduction and the checker, the command line
and the Python API. The expected lines are the checks' own sentences, written out here."""

import pytest
import torch

from pp_demo import build_model, core
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import pooled_positions
from pp_demo.ranks.torchrun_env import TORCHRUN_VARS, is_torchrun_rank
from pp_demo.ranks.validate import check_device
from pp_demo.verify.checker import inputs
from pp_demo.verify.checker.judge import check_forward
from pp_demo.verify.compare import reproduce_runs
from pp_demo.verify.tolerances import dtype_named

FLOAT_IDS = torch.tensor([[5.0, 6.0, 0.0]])


def _refusal(call):
    with pytest.raises(BadInput) as refused:
        call()
    return str(refused.value)


def test_ids_that_are_not_integers_get_one_error_at_the_pipeline_and_the_rules_door():
    model = build_model("llama")
    expected = "input_ids must hold integers (torch.long), got torch.float32"
    assert _refusal(lambda: core.pipeline_logits(model, FLOAT_IDS, torch.ones(1, 3, dtype=torch.long))) == expected
    assert _refusal(lambda: pooled_positions("count", input_ids=FLOAT_IDS, pad_token_id=0)) == expected
    assert _refusal(lambda: core.integer_tensor(FLOAT_IDS, "input_ids", 2)) == expected


def test_ids_that_are_no_tensor_get_one_error_at_the_pipeline_and_the_rules_door():
    model = build_model("llama")
    expected = "input_ids must be a torch.Tensor, got list (wrap it: torch.tensor(...))"
    assert _refusal(lambda: core.pipeline_logits(model, [[5, 6]], torch.ones(1, 2, dtype=torch.long))) == expected
    assert _refusal(lambda: pooled_positions("count", input_ids=[[5, 6]], pad_token_id=0)) == expected


def test_an_unknown_precision_gets_one_error_in_the_reproduction_the_checker_and_by_name():
    expected = "unknown precision 'fp64'; use one of fp32, bf16, fp16"
    assert _refusal(lambda: dtype_named("fp64")) == expected
    assert _refusal(lambda: reproduce_runs([("llama", "count")], dtype="fp64")) == expected
    assert _refusal(lambda: check_forward(build_model("llama"), lambda m, i, a: None, dtype="fp64")) == expected
    # torch's own names and dtypes are the same precisions
    assert [dtype_named(d) for d in ("bf16", "bfloat16", "torch.bfloat16", torch.bfloat16)] == [torch.bfloat16] * 4
    assert (
        _refusal(lambda: dtype_named(torch.float64)) == "unknown precision torch.float64; use one of fp32, bf16, fp16"
    )


def test_a_device_that_is_none_gets_one_error_on_the_command_line_and_in_the_checker():
    # "use cpu", then each kind of device this machine can compute on
    assert _refusal(lambda: check_device("tpu")).startswith("'tpu' is not a device: use cpu")
    assert _refusal(lambda: inputs.checker_device("tpu")) == _refusal(lambda: check_device("tpu"))


def test_a_pad_id_outside_the_vocabulary_gets_one_error_when_built_and_when_checked():
    expected = "pad_token_id 99 is outside the vocabulary (ids 0..31), or None"
    assert _refusal(lambda: build_model("llama", pad_token_id=99)) == expected
    model = build_model("llama")
    model.config.pad_token_id = 99  # a model given to the checker as it is
    assert _refusal(lambda: inputs.check_model(model)) == expected


def test_a_torchrun_rank_is_one_with_every_variable_torchrun_sets(monkeypatch):
    for name in TORCHRUN_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("RANK", "1")
    assert not is_torchrun_rank()  # a half-set environment is refused before any job (check_torchrun_env)
    for name, value in {"WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "localhost", "MASTER_PORT": "1"}.items():
        monkeypatch.setenv(name, value)
    assert is_torchrun_rank()
