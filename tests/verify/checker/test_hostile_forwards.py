"""Forwards that attack the checker's process still get one verdict line, the right exit status,
and leave nothing running (docs/checker.md, "What your callable is given" and "Exit codes").

Each forward is a small module written under ``tmp_path``. The command runs in the test's own
process (its guard, whose child runs the forward), except where a checker that went wrong would
hang: there it runs as a subprocess with a limit, so the test fails instead. The correct forward is
``fixed_pipeline`` (pools the rightmost non-pad token, as ``model.forward`` does): PASS with it
is what any attack must not change, and the count rule (ColossalAI 0.5.0's) must not pass.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_check as cli

from pp_demo.core import build_model
from pp_demo.errors import BadInput
from pp_demo.ranks.in_process import count_rule_pipeline, fixed_pipeline
from pp_demo.verify.checker.judge import check_forward
from pp_demo.verify.checker.report import EXIT_UNTESTED

REPO = Path(__file__).resolve().parents[3]
TWO = ["--cases", "left", "right"]
HEADER = "import os, sys, threading, time\nfrom pp_demo.ranks.in_process import fixed_pipeline, count_rule_pipeline\n"


def _run(tmp_path: Path, body: str, *args: str, limit: float = 120) -> tuple[int, str, str]:
    """``python -m pp_demo check hostile:forward ARGS`` with ``body`` as the module; killed (its
    whole session) and failed past ``limit``."""
    (tmp_path / "hostile.py").write_text(HEADER + body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    command = [sys.executable, "-m", "pp_demo", "check", "hostile:forward", *args]
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as proc:
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"the checker did not exit within {limit} s")
    return proc.returncode, out, err


def _in_process(capsys, monkeypatch, tmp_path: Path, body: str, *args: str) -> tuple[int, str, str]:
    """``python -m pp_demo check hostile:forward ARGS`` through ``main``, ``body`` as the module."""
    (tmp_path / "hostile.py").write_text(HEADER + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    return cli(capsys, "hostile:forward", *args)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc")
def test_children_the_forward_forks_are_ended_with_the_check(capsys, monkeypatch, tmp_path):
    body = (
        "def forward(model, ids, mask):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(600)\n"
        "        os._exit(0)\n"
        f"    open({str(tmp_path / 'pids')!r}, 'a').write(f'{{pid}}\\n')\n"
        "    return fixed_pipeline(model, ids, mask)\n"
    )
    code, out, _ = _in_process(capsys, monkeypatch, tmp_path, body, *TWO)
    assert code == 0 and out.startswith("PASS: 2/2 batches")
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10  # SIGKILL is sent before the command returns; reaping by init may lag
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_running, pids))


def test_a_non_daemon_thread_left_running_does_not_keep_the_command_alive(tmp_path):
    body = (
        "def forward(model, ids, mask):\n"
        "    threading.Thread(target=threading.Event().wait, daemon=False).start()  # never ends\n"
        "    return fixed_pipeline(model, ids, mask)\n"
    )
    code, out, err = _run(tmp_path, body, *TWO, "--timeout", "20", limit=90)
    assert code == 0 and out.startswith("PASS: 2/2 batches")
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_timeout_shorter_than_model_forward_itself_is_said_so_not_a_crash(capsys):
    code, out, err = cli(capsys, "pp_demo.ranks.in_process:fixed_pipeline", "--cases", "left", "--timeout", "1e-6")
    assert code == 3
    assert out.strip().splitlines()[2] == (
        "  batch left (1x6): your callable did not return within 1e-06 s (--timeout); abandoned: "
        "the timeout is too short, model.forward itself takes longer on this batch"
    )
    assert "SIGABRT" not in out + err and "terminate called" not in err


@pytest.mark.parametrize(
    "how",
    ["sys.stdout.close()", "sys.stdout = None", "os.dup2(os.open(os.devnull, os.O_WRONLY), 1); sys.stderr.close()"],
    ids=["closes-stdout", "stdout-none", "fd-1-to-devnull-and-closes-stderr"],
)
def test_a_forward_that_closes_or_replaces_stdout_still_gets_its_verdict(capsys, monkeypatch, tmp_path, how):
    body = f"def forward(model, ids, mask):\n    {how}\n    return count_rule_pipeline(model, ids, mask)\n"
    code, out, _ = _in_process(capsys, monkeypatch, tmp_path, body, *TWO)
    # the count rule pools the left-padded row's pad token: left fails, right matches
    assert code == 1
    assert out.startswith("FAIL: 1/2 batches match the reference")
    assert "consistent with: count" in out


JUDGE_REPLACED = "your callable replaced the checker's own pp_demo.verify.checker.judge._judge"


@pytest.mark.parametrize(
    "at_import, in_forward, expected",
    [
        (  # while the forward runs: every batch says so, and none is judged
            "import pp_demo.verify.checker.judge as judge\n",
            "    judge._judge = lambda batch, ref, got, atol: None\n",
            [
                "FAIL (your callable failed): 0/2 batches",
                "reference: the position model.forward pools",
                f"  batch left (1x6): {JUDGE_REPLACED}",
                f"  batch right (1x6): {JUDGE_REPLACED}",
            ],
        ),
        (  # when the module is imported, before any batch: one line, no verdict at all
            "from pp_demo.verify.checker import report\nreport.Report.exit_code = property(lambda self: 0)\n",
            "",
            [
                "FAIL (your callable failed): it replaced the checker's own "
                "pp_demo.verify.checker.report.Report.exit_code: no verdict"
            ],
        ),
    ],
    ids=["judge-while-the-forward-runs", "report-at-import"],
)
def test_a_forward_that_replaces_the_checkers_own_code_gets_no_pass(
    capsys, monkeypatch, tmp_path, at_import, in_forward, expected
):
    body = f"{at_import}def forward(model, ids, mask):\n{in_forward}    return count_rule_pipeline(model, ids, mask)\n"
    code, out, _ = _in_process(capsys, monkeypatch, tmp_path, body, *TWO)
    lines = out.strip().splitlines()
    assert code == 3
    assert len(lines) == len(expected), out
    assert all(line.startswith(start) for line, start in zip(lines, expected, strict=True)), out


def test_in_python_a_forward_that_replaces_the_judge_gets_no_pass():
    import pp_demo.verify.checker.judge as judge

    original = judge._judge

    def cheats(model, ids, mask):
        judge._judge = lambda *_: None
        return count_rule_pipeline(model, ids, mask)

    try:
        report = check_forward(build_model("llama"), cheats, cases=["left"])
    finally:
        judge._judge = original
    assert report.exit_code == 3 and not report.passed


@pytest.mark.same_on_every_stack
@pytest.mark.parametrize("given", ["nb01.ipynb:ref", "notebooks/01_four_padding_rows.ipynb:ref"])
def test_a_notebook_is_said_to_be_no_module(capsys, given):
    code, out, err = cli(capsys, given)
    assert code == 2 and out == ""
    line = err.strip().splitlines()[-1]
    assert "is a notebook, and a notebook cannot be imported: move ref into a .py file" in line
    assert "No module named" not in err


def _nan_score(model):
    with __import__("torch").no_grad():
        model.score.weight[0, 0] = float("nan")
    return model


def test_a_nan_in_the_reference_is_the_models_not_the_callables():
    with pytest.raises(BadInput, match=r"^model.forward's own logits are not finite \(NaN or inf\) on batch left"):
        check_forward(_nan_score(build_model("llama")), fixed_pipeline, cases=["left"])


def test_a_nan_in_a_checkpoints_reference_is_a_usage_error(capsys, tmp_path):
    _nan_score(build_model("llama")).save_pretrained(tmp_path / "nan")
    code, out, err = cli(capsys, "pp_demo.ranks.in_process:fixed_pipeline", "--model-path", str(tmp_path / "nan"))
    assert code == 2 and out == ""
    assert "model.forward's own logits are not finite" in err.strip().splitlines()[-1]
    assert "of your logits" not in err


def test_cases_that_tell_no_rule_apart_are_untested_not_a_pass(capsys):
    """Right padding: the count rule reads the same token as model.forward, so the bug matches."""
    code, out, _ = cli(capsys, "pp_demo.ranks.in_process:count_rule_pipeline", "--cases", "right")
    assert code == EXIT_UNTESTED == 4
    lines = out.strip().splitlines()
    assert lines[0].startswith("UNTESTED: 1/1 batches match the reference")
    assert "PASS" not in out
    assert lines[-1].startswith("warning: these cases pool alike under every known rule")
    report = check_forward(build_model("llama"), count_rule_pipeline, cases=["right", "none"])
    assert report.exit_code == 4 and not report.passed


def test_cases_that_tell_rules_apart_still_pass_the_fix(capsys):
    code, out, _ = cli(capsys, "pp_demo.ranks.in_process:fixed_pipeline", "--cases", "right", "left")
    assert code == 0 and out.startswith("PASS: 2/2") and "warning" not in out
