"""Every class of bad input to the checker ends in one line and the documented exit code.

Exit codes as docs/checker.md documents them: 0 pass, 1 mismatch, 2 usage error, 3 the callable
failed, 130 interrupted. The callables live in ``checker_callables.py`` beside this file; every
run uses the ``left`` case only (one batch), except where a test needs more.
"""

import json
import os
import signal
import subprocess
import sys

import pytest
import torch
from helpers import interruptible
from helpers import run_check as cli

from pp_demo.core import build_model
from pp_demo.errors import BadInput
from pp_demo.verify.checker.inputs import check_sizes
from pp_demo.verify.checker.judge import check_forward

HERE = os.path.dirname(__file__)
REPO = os.path.dirname(os.path.dirname(HERE))
LEFT = ["--cases", "left"]


def one_line_error(err):
    lines = err.strip().splitlines()
    assert lines[-1].startswith("python -m pp_demo: error: ") or "error:" in lines[-1]
    return lines[-1]


# The verdict names what the callable did in plain Python (it raised, exited, or returned a list):
# torch and transformers cannot change it, so the extra legs leave these out.
_PLAIN_PYTHON = pytest.mark.same_on_every_stack


@pytest.mark.parametrize(
    "name, expected",
    [
        pytest.param("exits", "raised SystemExit: 0 (checker_callables.py:", marks=_PLAIN_PYTHON),
        pytest.param("two_arguments", "raised TypeError: ", marks=_PLAIN_PYTHON),
        pytest.param("keyword_only", "raised TypeError: ", marks=_PLAIN_PYTHON),
        pytest.param("returns_a_list", "returned a list, not a tensor of logits", marks=_PLAIN_PYTHON),
        ("returns_numpy", "returned a numpy.ndarray, not a torch.Tensor of logits"),
        ("returns_the_output", "returned a SequenceClassifierOutputWithPast, not logits (return its .logits)"),
        ("returns_meta", "returned logits on the meta device"),
        pytest.param(
            "raises_value_error",
            "raised ValueError: my framework's own complaint (checker_callables.py:",
            marks=_PLAIN_PYTHON,
        ),
        pytest.param(
            "raises_runtime_error",
            "raised RuntimeError: my framework crashed (checker_callables.py:",
            marks=_PLAIN_PYTHON,
        ),
        ("wrong_shape", "returned logits of shape (1, 5); model.forward returns (1, 3)"),
    ],
)
def test_a_callable_that_fails_is_a_verdict_with_exit_3(capsys, name, expected):
    code, out, err = cli(capsys, f"checker_callables:{name}", *LEFT)
    assert code == 3
    assert out.startswith("FAIL (your callable failed): 0/1 batches")
    assert f"  batch left (1x6): your callable {expected}" in out
    assert "Traceback" not in out + err


def test_nan_logits_are_named_and_a_mismatch(capsys):
    code, out, _ = cli(capsys, "checker_callables:returns_nan", *LEFT)
    assert code == 1 and "  left: NaN in rows [0] of your logits; rows [0] differ" in out


@pytest.mark.same_on_every_stack
def test_a_hanging_callable_is_abandoned_after_the_timeout(capsys):
    code, out, _ = cli(capsys, "checker_callables:hangs", *LEFT, "--timeout", "1")
    assert code == 3 and "your callable did not return within 1 s (--timeout); abandoned" in out


@pytest.mark.same_on_every_stack
def test_ctrl_c_prints_one_line_and_exits_130():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, HERE]))
    command = [sys.executable, "-m", "pp_demo", "check", "checker_callables:hangs", *LEFT]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with subprocess.Popen(command, env=env, preexec_fn=interruptible, **pipes) as proc:
        assert proc.stderr.readline().startswith("checking 1 batch")  # the callable is running now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip() == "interrupted (Ctrl-C): no verdict" and out == ""


@pytest.mark.same_on_every_stack
@pytest.mark.parametrize(
    "source, expected",
    [
        ("def forward(model, ids, mask)\n    return ids\n", "raised SyntaxError: expected ':' (broken_module.py:1)"),
        (
            "raise ImportError('a dependency is missing')\n",
            "raised ImportError: a dependency is missing (broken_module.py:1)",
        ),
    ],
)
def test_a_module_that_fails_at_import_is_the_callables_failure(capsys, tmp_path, monkeypatch, source, expected):
    (tmp_path / "broken_module.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = cli(capsys, "broken_module:forward", *LEFT)
    assert code == 3 and out.strip().splitlines() == [
        f"FAIL (your callable failed): importing broken_module {expected}"
    ]


@pytest.mark.same_on_every_stack
@pytest.mark.parametrize(
    "args, expected",
    [
        (["nodots"], "give the callable as package.module:function"),
        (["no_such_module_here:forward"], "cannot import no_such_module_here"),
        (["pp_demo.core:RULES"], "'RULES' in pp_demo.core is a dict, not a callable"),
        (["checker_callables:correct", "--atol", "-1"], "atol is a finite number more than 0"),
        (["checker_callables:correct", "--atol", "nan"], "atol is a finite number more than 0"),
        (["checker_callables:correct", "--lengths", "0"], "lengths[0] is an integer of at least 2 and at most 4096"),
        (["checker_callables:correct", "--batch-sizes", "0"], "batch_sizes[0] is an integer of at least 1 and at most"),
        (
            ["checker_callables:correct", "--micro-batches", "0"],
            "micro_batches is an integer of at least 1 and at most",
        ),
        (["checker_callables:correct", "--micro-batches", "2", "--batch-sizes", "3"], "do not split into 2"),
        (["checker_callables:correct", "--device", "tpu"], "'tpu' is not a device: use cpu"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, args, expected):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert expected in one_line_error(err) and "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this build has CUDA")
def test_a_device_the_build_lacks_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "checker_callables:correct", "--device", "cuda")
    assert code == 2 and "sees no CUDA device; use cpu" in one_line_error(err)


def saved(tmp_path, model, edit=None):
    folder = tmp_path / "ckpt"
    model.save_pretrained(folder)
    if edit:
        config = json.loads((folder / "config.json").read_text())
        config.update(edit)
        (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


def test_a_checkpoint_whose_pad_id_is_outside_the_vocabulary(capsys, tmp_path):
    path = saved(tmp_path, build_model("llama"), {"pad_token_id": 1000})
    code, _, err = cli(capsys, "checker_callables:correct", "--model-path", path)
    assert code == 2 and "pad_token_id 1000 is outside the vocabulary (ids 0..31)" in one_line_error(err)


def test_a_bert_checkpoint_has_no_score_head(capsys, tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    code, _, err = cli(
        capsys, "checker_callables:correct", "--model-path", saved(tmp_path, BertForSequenceClassification(config))
    )
    assert code == 2 and "BertForSequenceClassification has no .score head" in one_line_error(err)


def test_a_gpt2_checkpoint_with_8_positions_gets_a_shorter_battery(capsys, tmp_path):
    path = saved(tmp_path, build_model("gpt2", n_positions=8))
    code, out, _ = cli(capsys, "checker_callables:correct", "--model-path", path, "--cases", "left", "random")
    assert code == 0
    assert "lengths [5, 9, 16] shortened to [5, 8]: the model takes at most 8 positions" in out
    assert out.startswith("PASS: 7/7 batches")  # left, and 3 sizes at each of the lengths 5 and 8


def test_the_model_path_is_handed_to_a_callable_that_asks_for_it(capsys, tmp_path):
    path = saved(tmp_path, build_model("qwen2"))
    code, out, _ = cli(capsys, "checker_callables:takes_the_path", "--model-path", path, "--micro-batches", "2", *LEFT)
    assert code == 0 and out.startswith("PASS: 1/1 batches")


# ---- the Python API refuses what the command line refuses, with the same line


@pytest.fixture(scope="module")
def llama():
    return build_model("llama")


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"atol": -1}, "atol is a finite number more than 0"),
        ({"atol": float("nan")}, "atol is a finite number more than 0"),
        ({"lengths": (0,)}, "lengths[0] is an integer of at least 2 and at most 4096, got 0"),
        ({"batch_sizes": (0,)}, "batch_sizes[0] is an integer of at least 1 and at most 1024, got 0"),
        ({"lengths": (4097,)}, "lengths[0] is an integer of at least 2 and at most 4096, got 4097"),
        ({"batch_sizes": [2, 1025]}, "batch_sizes[1] is an integer of at least 1 and at most 1024, got 1025"),
        ({"micro_batches": 1025}, "micro_batches is an integer of at least 1 and at most 1024, got 1025"),
        ({"lengths": 5}, "lengths is a list of integers of at least 2 and at most 4096 (one or more), got 5"),
        ({"attn_implementation": "bogus"}, "unknown attention implementation 'bogus'; use eager or sdpa"),
        ({"dtype": "fp64"}, "unknown precision 'fp64'; use one of fp32, bf16, fp16"),
        ({"seed": "x"}, "seed is an integer from 0 to 2**64 - 1, got 'x'"),
        ({"cases": ["bogus"]}, "unknown case(s) bogus"),
        ({"micro_batches": 0}, "micro_batches is an integer of at least 1 and at most 1024, got 0"),
        ({"atol": float("inf")}, "atol is a finite number more than 0"),
        ({"timeout_s": 0}, "timeout_s is a number of seconds more than 0 and at most 86400 (a day), got 0"),
        ({"timeout_s": -1}, "timeout_s is a number of seconds more than 0 and at most 86400"),
        ({"timeout_s": float("inf")}, "timeout_s is a number of seconds more than 0 and at most 86400"),
        ({"cases": "left"}, "cases takes a list of names, got the string 'left'"),
        ({"seed": -1}, "seed is an integer from 0 to 2**64 - 1, got -1"),
    ],
)
def test_the_api_refuses_bad_options_in_one_line(llama, options, expected):
    with pytest.raises(BadInput) as error:
        check_forward(llama, "checker_callables:correct", **{"cases": ["left"], **options})
    assert expected in str(error.value) and "\n" not in str(error.value)


# check_sizes, in Python, within the bounds of check's options (--lengths up to 4096, --batch-sizes
# and --micro-batches up to 1024: docs/checker.md), each refusal naming the argument
LENGTHS = "lengths is a list of integers of at least 2 and at most 4096 (one or more), got "
BATCH_SIZES = "batch_sizes is a list of integers of at least 1 and at most 1024 (one or more), got "


@pytest.mark.parametrize(
    "lengths, batch_sizes, micro_batches, expected",
    [
        # too large: one past each top, and a size int() takes that would never finish
        ((4097,), (2,), 1, "lengths[0] is an integer of at least 2 and at most 4096, got 4097"),
        ((5, 10**20), (2,), 1, f"lengths[1] is an integer of at least 2 and at most 4096, got {10**20}"),
        ((5,), (1025,), 1, "batch_sizes[0] is an integer of at least 1 and at most 1024, got 1025"),
        ((5,), (2,), 1025, "micro_batches is an integer of at least 1 and at most 1024, got 1025"),
        # zero, negative, and a length of one token
        ((1,), (2,), 1, "lengths[0] is an integer of at least 2 and at most 4096, got 1"),
        ((5, -9), (2,), 1, "lengths[1] is an integer of at least 2 and at most 4096, got -9"),
        ((5,), (0,), 1, "batch_sizes[0] is an integer of at least 1 and at most 1024, got 0"),
        ((5,), (2,), 0, "micro_batches is an integer of at least 1 and at most 1024, got 0"),
        ((5,), (2,), -2, "micro_batches is an integer of at least 1 and at most 1024, got -2"),
        # the wrong type: not a list, a string, nothing, not integers
        (5, (2,), 1, LENGTHS + "5"),
        ("59", (2,), 1, LENGTHS + "'59'"),
        ((), (2,), 1, LENGTHS + "()"),
        ({5, 9}, (2,), 1, LENGTHS + repr({5, 9})),  # a set: no order to take lengths in
        ((5.0,), (2,), 1, "lengths[0] is an integer of at least 2 and at most 4096, got 5.0"),
        ((5,), None, 1, BATCH_SIZES + "None"),
        ((5,), [True], 1, "batch_sizes[0] is an integer of at least 1 and at most 1024, got True"),
        ((5,), (2,), "2", "micro_batches is an integer of at least 1 and at most 1024, got '2'"),
        ((5,), (2,), 2.0, "micro_batches is an integer of at least 1 and at most 1024, got 2.0"),
    ],
)
def test_check_sizes_refuses_sizes_outside_the_command_lines_bounds(lengths, batch_sizes, micro_batches, expected):
    with pytest.raises(BadInput) as error:
        check_sizes(lengths, batch_sizes, micro_batches)
    assert str(error.value) == expected


def test_check_sizes_refuses_a_generator_before_the_battery_uses_it_up():
    with pytest.raises(BadInput, match=r"^lengths is a list of integers .* got <generator object"):
        check_sizes((n for n in (5, 9)), (2,), 1)


def test_check_sizes_takes_each_bound_itself_and_the_api_runs_a_small_battery(llama):
    assert check_sizes((2, 4096), range(1, 1025, 1023), 1024) is None
    report = check_forward(llama, "checker_callables:correct", lengths=[3], batch_sizes=[2], cases=["left", "random"])
    assert report.passed and [(case.name, case.shape) for case in report.cases] == [
        ("left", "1x6"),
        ("random_L3_B2", "2x3"),
    ]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this build has CUDA")
def test_the_api_refuses_a_device_the_build_lacks(llama):
    with pytest.raises(BadInput, match="sees no CUDA device"):
        check_forward(llama, "checker_callables:correct", device="cuda")


@pytest.mark.parametrize(
    "model, expected",
    [
        (None, "model must be a transformers *ForSequenceClassification model, got NoneType"),
        ("causal", "LlamaForCausalLM is not a sequence classifier"),
        ("pad", "pad_token_id 1000 is outside the vocabulary (ids 0..31)"),
    ],
)
def test_the_api_refuses_models_it_cannot_judge(model, expected):
    if model == "causal":
        from transformers import LlamaForCausalLM

        model = LlamaForCausalLM(build_model("llama").config)
    elif model == "pad":
        model = build_model("llama")
        model.config.pad_token_id = 1000
    with pytest.raises(BadInput) as error:
        check_forward(model, "checker_callables:correct")
    assert expected in str(error.value)


def test_the_api_refuses_a_non_callable_and_takes_a_module_function_string(llama):
    with pytest.raises(BadInput, match="forward must be a callable"):
        check_forward(llama, 42)
    report = check_forward(llama, "checker_callables:correct", dtype="bf16", cases=["left", "right"])
    assert report.passed and report.exit_code == 0 and report.atol == 1e-2


def test_one_progress_line_per_batch_on_stderr_and_the_report_on_stdout(capsys):
    code, out, err = cli(capsys, "checker_callables:correct", "--cases", "left", "right")
    assert code == 0 and out.startswith("PASS: 2/2 batches")
    assert err.splitlines() == [
        "checking 2 batches against model.forward",
        "batch 1/2 left (1x6): ok",
        "batch 2/2 right (1x6): ok",
    ]


def test_micro_batches_make_every_batch_a_multiple_of_m(llama):
    sizes = []

    def records(model, ids, mask):
        sizes.append(ids.shape[0])
        return model(input_ids=ids, attention_mask=mask).logits

    report = check_forward(llama, records, micro_batches=3, lengths=(5,))
    assert report.passed and sizes and all(size % 3 == 0 for size in sizes)
    assert sorted(set(sizes[-3:])) == [3, 6, 9]  # the default sizes 2, 4, 7 rounded up to multiples of 3
