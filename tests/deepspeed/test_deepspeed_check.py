"""``python -m pp_demo check MODULE:BUILDER --engine deepspeed``: a DeepSpeed pipeline someone wrote
(``examples/deepspeed_pipeline.py``, its own layers and pooling) judged on two CPU ranks the command
starts. Expected verdicts from the review table: a count of non-pad tokens minus one pools position 3
of ``[0, 0, 5, 6, 7, 8]``, where ``model.forward`` pools 5; the rightmost non-pad id pools 5.
"""

import subprocess
import sys

import pytest

from pp_demo.cli import main
from pp_demo.deepspeed import NOT_INSTALLED, missing

pytestmark = [pytest.mark.distributed, pytest.mark.skipif(missing() is not None, reason=NOT_INSTALLED)]


def _check(repo, builder, *flags):
    command = [sys.executable, "-m", "pp_demo", "check", f"examples.deepspeed_pipeline:{builder}", "--engine"]
    command += ["deepspeed", "--family", "qwen2", "--cases", "left", "right", *flags]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=300)


def test_a_wrong_pooling_is_caught_row_by_row(repo):
    done = _check(repo, "count_pipeline")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("FAIL: 1/2 batches match")
    assert "left: rows [0] differ; row 0 [0, 0, " in done.stdout
    assert "pooled at position 3, model.forward pools 5" in done.stdout
    assert done.stdout.rstrip().endswith("consistent with: count")


@pytest.mark.slow  # about 30 s on 2 loaded cores; the engine's own tests show the fix exact on every row
def test_the_rightmost_non_pad_pooling_passes(repo):
    done = _check(repo, "fixed_pipeline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("PASS: 2/2 batches match")


def test_a_pipeline_needs_two_ranks_or_more(capsys):
    # in this process: refused before any rank starts
    with pytest.raises(SystemExit) as stop:
        main(["check", "examples.deepspeed_pipeline:fixed_pipeline", "--engine", "deepspeed", "--ranks", "1"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith("argument --ranks: expected an integer from 2 to 8, got '1'")
