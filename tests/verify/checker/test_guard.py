"""The command judges from outside the callable's process, and no number makes a wrong forward pass.

A callable that ends its process (``os._exit(0)``, a segfault) is a verdict with exit 3 naming
the batch it was on (docs/checker.md, "Exit codes"); a tolerance at or above the smallest
difference between the reference and another position of the battery is refused before the
callable runs, with the bound and the tolerances that fit the logits.
"""

import pytest
from helpers import run_check as cli

from pp_demo.core import build_model
from pp_demo.errors import BadInput
from pp_demo.ranks.in_process import count_rule_pipeline
from pp_demo.verify.checker.guard import verdict_of_a_lost_child
from pp_demo.verify.checker.judge import check_forward
from pp_demo.verify.compare import compare_rows

TWO = ["--cases", "left", "right"]


@pytest.mark.parametrize(
    "name, how",
    [
        ("hard_exit", "ended the checker's process (exit status 0: os._exit?) without returning"),
        ("segfaults", "killed the checker's process (SIGSEGV)"),
    ],
)
def test_a_callable_that_ends_the_process_is_a_verdict_with_exit_3(capsys, name, how):
    code, out, err = cli(capsys, f"checker_callables:{name}", *TWO)
    assert code == 3
    assert out.strip().splitlines() == [
        "FAIL (your callable failed): 0/2 batches match the reference",
        f"  batch left (1x6): your callable {how}",
        "  not run after that: the 1 later batch(es)",
    ]
    assert "Traceback" not in out + err


def test_a_module_that_exits_at_import_is_the_callables_failure(capsys, tmp_path, monkeypatch):
    (tmp_path / "exits_at_import.py").write_text("import os\nos._exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = cli(capsys, "exits_at_import:forward", *TWO)
    assert code == 3 and out.strip() == (
        "FAIL (your callable failed): importing exits_at_import ended the checker's process "
        "(exit status 0: os._exit?) without returning"
    )


def test_the_verdict_counts_the_batches_that_passed_before():
    events = [["import", "m"], ["start", "1", "3", "left", "1x6"], ["done", "1", "ok"]]
    events.append(["start", "2", "3", "right", "1x6"])
    assert verdict_of_a_lost_child(events, 0).splitlines()[:2] == [
        "FAIL (your callable failed): 1/3 batches match the reference",
        "  batch right (1x6): your callable ended the checker's process (exit status 0: os._exit?) without returning",
    ]


@pytest.mark.same_on_every_stack
@pytest.mark.parametrize(
    "args, expected",
    [
        (["--timeout", "inf"], "--timeout is a number of seconds more than 0 and at most 86400 (a day), got inf"),
        (["--timeout", "1e300"], "--timeout is a number of seconds more than 0 and at most 86400"),
        (["--atol", "inf"], "atol is a finite number more than 0"),
        (["--atol", "1e300"], "atol 1e+300 would let a wrong pooled position pass"),
        (["tests/verify/checker/checker_callables.py:correct"], "is a file path; give the module's name instead"),
    ],
)
def test_numbers_out_of_bounds_are_usage_errors(capsys, args, expected):
    if args[0].startswith("--"):
        args = ["pp_demo.ranks.in_process:count_rule_pipeline", *args]
    code, out, err = cli(capsys, *args, "--cases", "left")
    assert code == 2 and out == ""
    assert expected in err.strip().splitlines()[-1] and "Traceback" not in err


def test_inf_and_nan_logits_are_named_as_they_are(capsys):
    code, out, _ = cli(capsys, "checker_callables:returns_inf", "--cases", "left")
    assert code == 1 and "  left: inf in rows [0] of your logits; rows [0] differ" in out


def test_an_async_forward_is_named_without_a_warning(capsys):
    code, out, err = cli(capsys, "checker_callables:is_async", "--cases", "left")
    assert code == 3 and "your callable returned a coroutine (an async def forward)" in out
    assert "RuntimeWarning" not in err


@pytest.fixture(scope="module")
def llama():
    return build_model("llama")


def test_a_tolerance_wide_enough_to_pass_the_count_rule_is_refused_with_the_bound(llama):
    with pytest.raises(BadInput) as error:
        check_forward(llama, count_rule_pipeline, atol=1.0)
    message = str(error.value)
    assert "the nearest other position's logits differ from the reference's by" in message
    assert "two steps of each precision are: fp32" in message and "\n" not in message
    # below the bound the count rule is still caught: a tolerance of 1e-3 is no excuse
    assert check_forward(llama, count_rule_pipeline, atol=1e-3).exit_code == 1


def test_the_bound_of_a_tolerance_is_what_separates_the_positions(llama):
    """atol just below the stated bound is accepted and still fails the count rule; at the bound it is refused."""
    with pytest.raises(BadInput) as error:
        check_forward(llama, count_rule_pipeline, atol=10.0)
    bound = float(str(error.value).split("differ from the reference's by ")[1].split(";")[0])
    assert check_forward(llama, count_rule_pipeline, atol=bound * 0.9).exit_code == 1


def test_a_name_that_is_not_in_the_module_is_called_missing():
    from pp_demo.verify.checker.inputs import load_callable

    missing = "no" + "such" + "name"  # spelt apart: the repository's module-path scan would read it as a path
    with pytest.raises(BadInput, match=rf"pp_demo.ranks.in_process has no '{missing}' \(a misspelt name\?\)"):
        load_callable(f"pp_demo.ranks.in_process:{missing}")


@pytest.mark.parametrize("atol", [-1.0, float("nan"), float("inf")])
def test_compare_rows_refuses_a_tolerance_that_is_no_tolerance(atol):
    import torch

    with pytest.raises(BadInput, match="atol is a finite number more than 0"):
        compare_rows(torch.zeros(1, 2), torch.zeros(1, 2), atol)
