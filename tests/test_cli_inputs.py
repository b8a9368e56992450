"""Bad inputs to the command line: each gives one line and exit 2, or the right result.

Only ``BadInput`` becomes ``python -m pp_demo: error: ...``; any other exception keeps its type.
Under torchrun the line is said once, by whichever rank gets there first.
"""

import os
import subprocess
import sys
import uuid

import pytest
import torch
from helpers import cli_error as _error

from pp_demo import cli
from pp_demo.cli import padding
from pp_demo.errors import BadInput
from pp_demo.ranks import torchrun_env

# every device type torch 2.x parses (c10/core/DeviceType.h); a build runs on few of them
DEVICE_TYPES = [
    "cpu", "cuda", "mps", "xpu", "meta", "hpu", "xla", "mtia", "ipu", "lazy", "vulkan", "ve",
    "fpga", "maia", "opengl", "opencl", "ideep", "hip", "privateuseone",
]  # fmt: skip


@pytest.fixture
def as_rank(monkeypatch):
    """``as_rank(r)``: this process as rank r of a two-rank torchrun (one run id per test)."""
    run_id = uuid.uuid4().hex

    def become(rank):
        env = {"TORCHELASTIC_RUN_ID": run_id, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2"}
        for name, value in {**env, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29999"}.items():
            monkeypatch.setenv(name, value)

    return become


# ------------------------------------------------------------------ BadInput, and nothing else


def test_only_bad_input_becomes_a_usage_error(capsys, monkeypatch):
    def refuses(args):
        raise BadInput("this value cannot be used")

    def breaks(args):
        raise ValueError("a bug, not a usage error")

    monkeypatch.setattr(padding, "_table", refuses)  # read when main builds its parser
    assert _error(capsys, "table") == "python -m pp_demo: error: this value cannot be used"
    monkeypatch.setattr(padding, "_table", breaks)
    with pytest.raises(ValueError, match="a bug, not a usage error") as raised:
        cli.main(["table"])
    assert type(raised.value) is ValueError


# ------------------------------------------------------------------ explore


def test_explore_with_the_mask_first_says_to_give_the_ids_first(capsys):
    line = _error(capsys, "explore", "--mask", "0", "0", "1", "1", "0", "0", "5", "6")
    assert "give the ids first" in line and "--mask takes every number after it" in line


def test_explore_with_a_huge_pad_id_says_the_limit(capsys):
    assert "0..2**63-1" in _error(capsys, "explore", "0", "0", "5", "--pad", "99999999999999999999999")


def test_explore_with_the_mask_after_the_ids_runs(capsys):
    assert cli.main(["explore", "0", "0", "5", "6", "--mask", "0", "0", "1", "1"]) == 0
    assert "true last real token (from the mask): 3" in capsys.readouterr().out


# ------------------------------------------------------------------ --device


@pytest.mark.parametrize("kind", DEVICE_TYPES)
def test_every_device_type_torch_knows_is_checked_against_this_build(capsys, kind):
    try:
        torch.device(kind)
    except RuntimeError:
        pytest.skip(f"this torch does not parse {kind!r}")
    usable = kind == "cpu" or getattr(getattr(torch, kind, None), "is_available", lambda: False)()
    if kind == "mps":
        usable = torch.backends.mps.is_available()
    if usable and kind != "meta":
        assert cli.build_parser().parse_args(["reproduce", "--device", kind]).device == kind
        return
    line = _error(capsys, "reproduce", "--device", kind)
    assert line.startswith(f"python -m pp_demo reproduce: error: argument --device: '{kind}'")
    assert "use cpu" in line


def test_a_device_index_past_the_count(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert "this machine has 2 cuda device(s), cuda:0..1" in _error(capsys, "reproduce", "--device", "cuda:2")
    assert cli.build_parser().parse_args(["reproduce", "--device", "cuda:1"]).device == "cuda:1"


# ------------------------------------------------------------------ torchrun


@pytest.mark.parametrize("job", ["reproduce", "families"])
def test_under_torchrun_without_distributed_one_line_says_what_to_add(capsys, as_rank, job):
    as_rank(1)
    assert "add --distributed" in _error(capsys, job)


def test_under_torchrun_the_error_is_said_once_whatever_the_rank(capsys, as_rank):
    as_rank(1)  # rank 1 gets there first: it speaks
    assert "add --distributed" in _error(capsys, "reproduce")
    as_rank(0)  # rank 0 of the same run: quiet, and still exit 2
    with pytest.raises(SystemExit) as stopped:
        cli.main(["reproduce"])
    assert stopped.value.code == 2 and capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "env, missing",
    [
        ({"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2"}, "LOCAL_RANK, MASTER_ADDR, MASTER_PORT not"),
        ({"RANK": "0"}, "MASTER_ADDR"),
    ],
    ids=["leaked torchrun variables", "RANK alone"],
)
@pytest.mark.parametrize("job", [["reproduce", "--distributed"], ["reproduce"], ["families", "--distributed"]])
def test_a_half_set_torchrun_environment_is_named_in_one_line(capsys, monkeypatch, env, missing, job):
    for name in torchrun_env.TORCHRUN_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    line = _error(capsys, *job)
    assert "a half-set torchrun environment" in line and missing in line


def test_a_leaked_rank_1_environment_is_said_from_a_shell(tmp_path):
    # the case: exit 2 with no output at all, since rank 1 kept quiet
    env = {k: v for k, v in os.environ.items() if k not in torchrun_env.TORCHRUN_VARS}
    env.update(TORCHELASTIC_RUN_ID="x", RANK="1", WORLD_SIZE="2")
    done = subprocess.run(
        [sys.executable, "-m", "pp_demo", "reproduce", "--distributed"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("python -m pp_demo: error: a half-set torchrun environment")
    assert len(done.stderr.splitlines()) == 1


def _torchrun(*args, timeout=300):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    return subprocess.run([*command, "-m", "pp_demo", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.distributed
@pytest.mark.slow
def test_torchrun_without_distributed_says_it_once_on_one_rank():
    done = _torchrun("reproduce", "--family", "llama")
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if "python -m pp_demo: error" in line]
    assert len(said) == 1 and "add --distributed" in said[0]
    assert "both stages in this process" not in done.stdout


@pytest.mark.distributed
@pytest.mark.slow
def test_torchrun_with_a_bad_flag_prints_the_usage_error_once():
    done = _torchrun("reproduce", "--distributed", "--family", "nope")
    assert sum("invalid choice: 'nope'" in line for line in done.stderr.splitlines()) == 1


# ------------------------------------------------------------------ bench --wait


@pytest.mark.parametrize("wait", ["inf", "-1", "nan", "86401"])
def test_bench_wait_is_bounded_like_every_other_number_of_seconds(capsys, tmp_path, wait):
    # bounded where the others are (pp_demo/bounds.py): 0 (start at once) up to a day
    line = _error(capsys, "bench", "--wait", wait, "--out", str(tmp_path / "bench"))
    assert line.startswith("python -m pp_demo: error: --wait is a number of seconds 0 or more")
    assert "at most 86400 (a day)" in line and not list(tmp_path.iterdir())


def test_bench_wait_of_0_means_start_at_once_and_the_api_refuses_what_the_flag_does():
    from pp_demo.bounds import seconds
    from pp_demo.instruments.bench import run_bench

    assert seconds(0, "--wait", zero=True) == 0.0
    with pytest.raises(BadInput, match="more than 0"):
        seconds(0, "--timeout")
    with pytest.raises(BadInput, match=r"wait_s is a number of seconds 0 or more .* got inf"):
        run_bench(wait_s=float("inf"))


# ------------------------------------------------------------------ a list option given twice


def test_a_rule_given_twice_runs_both_rules_not_only_the_last(capsys):
    assert cli.main(["reproduce", "--family", "llama", "--rule", "count", "--rule", "first_pad"]) == 0
    ran = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("llama ")]
    assert ran == ["count", "first_pad"]


@pytest.mark.parametrize(
    ("argv", "dest", "expected"),
    [
        (["reproduce", "--family", "llama", "--family", "opt"], "family", ["llama", "opt"]),  # the default replaced
        (["reproduce", "--family", "llama"], "family", ["llama"]),
        (["table", "--cases", "left", "--cases", "right"], "cases", ["left", "right"]),
        (["bench", "--stages", "2", "--stages", "3"], "stages", [2, 3]),
    ],
)
def test_every_list_option_given_again_combines_in_order(argv, dest, expected):
    assert getattr(cli.build_parser().parse_args(argv), dest) == expected


def test_a_distributed_run_that_fails_outside_the_tested_torch_range_says_so_in_one_line(capsys, monkeypatch):
    """torch 2.10's pipelining stops with an error about micro-batches: the line names the range."""
    from pp_demo.verify import compare

    def engine_refuses(*args, **kwargs):
        raise ValueError("Number of microbatches (1) must be >= the number of stages (2)")

    monkeypatch.setattr(compare, "reproduce_runs", engine_refuses)
    monkeypatch.setattr(torch, "__version__", "2.10.0+cu128")
    line = _error(capsys, "reproduce", "--distributed", "--family", "llama")
    assert "failed on torch 2.10.0+cu128, outside the tested range 2.11-2.15" in line
    assert "Number of microbatches (1)" in line and line.endswith("install a torch in the range (docs/gpu.md)")
    monkeypatch.setattr(torch, "__version__", "2.13.0")  # inside the range: the error as it is
    with pytest.raises(ValueError, match="Number of microbatches"):
        cli.main(["reproduce", "--distributed", "--family", "llama"])
