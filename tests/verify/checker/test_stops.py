"""A hung forward is judged within one timeout; a stop from outside is the checker's, not the callable's.

docs/checker.md, "Exit codes": the first batch that runs past ``--timeout`` ends the run (the
batches after it are reported not run, exit 3); SIGTERM sent to the command (``timeout``, a CI
job's limit) is said in one line, exit 143, and Ctrl-C in one line, exit 130: never a verdict on
the callable, however long it was taking.
"""

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import interruptible
from helpers import run_check as cli

from pp_demo.core import build_model
from pp_demo.verify.checker.judge import check_forward

# signals and timeouts: the same on every torch and transformers (`make test` runs them, the extra legs do not)
pytestmark = pytest.mark.same_on_every_stack

HERE = os.path.dirname(__file__)
REPO = os.path.dirname(os.path.dirname(HERE))
THREE = ["--cases", "left", "right", "none"]
STOPPED = "stopped from outside (SIGTERM: a timeout or a CI limit?): no verdict on your callable"


def test_the_first_batch_past_the_timeout_ends_the_run_and_the_rest_are_not_run(capsys):
    started = time.monotonic()
    code, out, err = cli(capsys, "checker_callables:hangs", *THREE, "--timeout", "1")
    assert code == 3
    assert out.startswith("FAIL (your callable failed): 0/3 batches match the reference")
    assert "  batch left (1x6): your callable did not return within 1 s (--timeout); abandoned" in out
    assert out.strip().splitlines()[-1].startswith("  not run after that failure (it ran past the timeout")
    assert out.strip().splitlines()[-1].endswith(": right, none")
    assert "batch 2/3" not in err  # never started, so never waited for
    # one timeout, not three: the child's start and torch's import take the rest
    assert time.monotonic() - started < 60


def test_in_python_the_report_lists_what_was_not_run_after_a_timeout():
    from checker_callables import hangs

    report = check_forward(build_model("llama"), hangs, cases=["left", "right", "none"], timeout_s=0.5)
    assert [case.name for case in report.cases] == ["left"] and report.not_run == ["right", "none"]
    assert report.exit_code == 3 and not report.passed


def _start(callable_name, **popen):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, HERE, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "pp_demo", "check", callable_name, *THREE, "--timeout", "60"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    assert proc.stderr.readline().startswith("checking 3 batches")  # the callable is running now
    return proc


@pytest.mark.parametrize("whole_group", [False, True], ids=["the-command-alone", "its-process-group"])
def test_sigterm_from_outside_is_the_checkers_stop_with_exit_143(whole_group):
    """``kill PID`` reaches the command alone; ``timeout`` signals the whole process group."""
    with _start("checker_callables:hangs", start_new_session=True) as proc:
        if whole_group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert out == "" and err.strip() == STOPPED  # no FAIL line, no batch blamed


def test_ctrl_c_while_the_callable_hangs_is_still_130_in_one_line():
    with _start("checker_callables:hangs", preexec_fn=interruptible) as proc:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip() == "interrupted (Ctrl-C): no verdict" and out == ""
