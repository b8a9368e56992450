"""``python -m pp_demo reproduce --engine deepspeed``: the reproduction's lines from DeepSpeed's ranks,
three stages where the split allows. Expected lines from the review table: the count rule misses
the left-padded row [0,0,5,6,7,8] and matches the right-padded one; the fix matches both."""

import subprocess
import sys

import pytest

from pp_demo.cli import main
from pp_demo.deepspeed import NOT_INSTALLED, missing

pytestmark = [pytest.mark.distributed, pytest.mark.skipif(missing() is not None, reason=NOT_INSTALLED)]


def _reproduce(*flags):
    command = [sys.executable, "-m", "pp_demo", "reproduce", "--engine", "deepspeed", *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # three ranks, two families: about 30 s on 2 loaded cores
def test_three_stages_on_three_ranks_print_the_reproduction_s_lines():
    done = _reproduce("--family", "llama", "opt", "--split-at", "1", "3", "--micro-batches", "2")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "a three-stage pipeline (three CPU ranks on DeepSpeed's PipelineModule)" in done.stdout
    lines = done.stdout.splitlines()[-4:]
    assert [line.split()[:2] for line in lines] == [
        [f, r] for f in ("llama", "opt") for r in ("count", "rightmost_non_pad")
    ]
    assert [line.split(": ", 1)[1] for line in lines] == ["[False, True]", "[True, True]"] * 2


def test_the_engine_runs_in_fp32_on_the_cpu_only(capsys):
    with pytest.raises(SystemExit) as stop:  # in this process: refused before any rank starts
        main(["reproduce", "--engine", "deepspeed", "--dtype", "bf16"])
    assert stop.value.code == 2
    said = capsys.readouterr().err.strip()
    assert said.endswith("--engine deepspeed runs on CPU ranks in fp32: leave out --dtype and --device")


def test_a_rank_killed_by_a_signal_is_reported_with_the_last_line_it_wrote(tmp_path):
    # a rank that aborts leaves no error file of its own: its log's last line says why
    from pp_demo.deepspeed.launch import failure

    aborted = "terminate called after throwing an instance of 'gloo::IoException'"
    (tmp_path / "rank1.log").write_text(f"loading\n{aborted}\n\n")
    said = str(failure(str(tmp_path), [0, -6]))
    assert said == f"DeepSpeed rank 1 ended with exit status -6: its last line: {aborted}"
    (tmp_path / "rank0.error").write_text("BadInput: the row is empty")
    assert str(failure(str(tmp_path), [1, -6])) == "DeepSpeed rank 0 failed: BadInput: the row is empty"
