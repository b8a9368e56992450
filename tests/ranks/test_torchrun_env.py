"""Being one of torchrun's ranks: a half-set environment named, one rank speaks, Ctrl-C in one line.

The Ctrl-C tests start real runs and interrupt them as a terminal would: SIGINT to the
foreground process group. pp_demo's spawned ranks share the caller's group; torchrun starts
its ranks in sessions of their own and passes the signal on to them itself.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import interruptible

from pp_demo.errors import BadInput
from pp_demo.ranks import torchrun_env
from pp_demo.ranks.torchrun_env import INTERRUPTED, check_torchrun_env, say_once

FULL = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29501", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "RANK": "0"}


@pytest.fixture
def clean_env(monkeypatch):
    for name in torchrun_env.TORCHRUN_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_no_torchrun_variables_and_all_of_them_are_both_fine(clean_env):
    check_torchrun_env()
    for name, value in {**FULL, "TORCHELASTIC_RUN_ID": "x"}.items():
        clean_env.setenv(name, value)
    check_torchrun_env()


def test_a_cluster_shell_with_only_master_addr_and_port_is_not_a_rank(clean_env):
    clean_env.setenv("MASTER_ADDR", "127.0.0.1")
    clean_env.setenv("MASTER_PORT", "29500")
    check_torchrun_env()


@pytest.mark.parametrize("missing", ["MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "WORLD_SIZE"])
def test_each_missing_variable_is_named(clean_env, missing):
    for name, value in {**FULL, "TORCHELASTIC_RUN_ID": "x"}.items():
        if name != missing:
            clean_env.setenv(name, value)
    with pytest.raises(BadInput, match=f"a half-set torchrun environment: .* set but {missing} not"):
        check_torchrun_env()


def test_say_once_lets_the_first_rank_of_a_run_speak_and_no_other(clean_env, capsys):
    run_id = uuid.uuid4().hex
    for rank in (1, 0):  # rank 1 first: it speaks, rank 0 of the same run keeps quiet
        for name, value in {**FULL, "RANK": str(rank), "TORCHELASTIC_RUN_ID": run_id}.items():
            clean_env.setenv(name, value)
        say_once(f"said by rank {rank}")
    assert capsys.readouterr().err == "said by rank 1\n"
    clean_env.setenv("TORCHELASTIC_RUN_ID", uuid.uuid4().hex)  # another run speaks again
    say_once("a new run")
    assert capsys.readouterr().err == "a new run\n"


def test_outside_torchrun_say_once_always_speaks(clean_env, capsys):
    say_once("one")
    say_once("one")
    assert capsys.readouterr().err == "one\none\n"


# ------------------------------------------------------------------ Ctrl-C, for real


def _processes():
    """``{pid: (ppid, session)}`` of every process (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":  # a zombie is gone, only not yet reaped
                found[int(entry.name)] = (int(fields[1]), int(fields[3]))
    return found


def _wait_for(condition, limit_s):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def _interrupt(command, members, at_least, after_s):
    """Start ``command`` in a session of its own; ``after_s`` after ``members(pid)`` holds
    ``at_least`` processes, SIGINT its process group; the exit code, the output, the ranks."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=interruptible,
    )
    try:
        assert _wait_for(lambda: len(members(process.pid)) >= at_least, 120), "the ranks never started"
        ranks = members(process.pid)
        time.sleep(after_s)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, out, err, ranks


def _interrupt_at_work(command, members, at_least, delays):
    """``_interrupt`` at each delay in turn until the signal lands while the ranks work: not
    after the run ended (exit 0), nor during the ranks' rendezvous, where c10d's own C++ logs
    its retry. Where the signal lands is the machine's timing; what pp_demo does then is the test."""
    for after_s in delays:
        code, out, err, ranks = _interrupt(command, members, at_least, after_s)
        before_work = "TCPStore" in err or "rendezvous" in err.lower()
        # pp_demo answered (its line) or failed to (a rank's KeyboardInterrupt); neither: the signal came
        # while the interpreters started, before any of pp_demo's code ran
        pp_demo_ran = INTERRUPTED in err or "KeyboardInterrupt" in err
        if code != 0 and not before_work and pp_demo_ran:
            return code, out, err, ranks
    pytest.fail(f"the signal never landed while the ranks worked (tried after {delays} s)")


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_during_a_spawned_run_says_one_line_and_leaves_no_rank():
    def session(pid):
        return [p for p, (_, sid) in _processes().items() if sid == pid and p != pid]

    # every family on every case: seconds of ranks' work, so the signal lands inside it
    command = [sys.executable, "-m", "pp_demo", "families", "--distributed"]
    # the fork server and two ranks; half a second in, the ranks are at work (forked, preloaded)
    code, out, err, ranks = _interrupt_at_work(command, session, at_least=3, delays=(0.5, 1.5, 3.0, 1.0))
    assert code == 130
    assert err.strip().splitlines() == [INTERRUPTED]
    assert _wait_for(lambda: not set(ranks) & set(_processes()), 10), "a rank outlived the run"


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_under_torchrun_says_one_line_and_the_ranks_end_before_torchrun_would_kill_them():
    def children(pid):
        return [p for p, (ppid, _) in _processes().items() if ppid == pid]

    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    command += ["-m", "pp_demo", "families", "--distributed"]
    # torchrun's ranks import torch afresh, then work for a few seconds: a second or two in, they
    # are in the pipeline's sends and receives, where a rank blocked in gloo used to ignore the signal
    code, out, err, ranks = _interrupt_at_work(command, children, at_least=2, delays=(1.0, 2.0, 3.0, 0.5, 4.0, 6.0))
    assert code != 0
    assert err.count(INTERRUPTED) == 1
    assert "KeyboardInterrupt" not in err  # no rank's traceback (torchrun reports its own signal)
    assert _wait_for(lambda: not set(ranks) & set(_processes()), 10), "a rank outlived the run"
    # torchrun waits 30 s for its ranks after passing the signal on, then SIGKILLs them (and logs it)
    assert "SIGKILL" not in err


@pytest.mark.distributed
def test_a_port_taken_before_the_spawned_ranks_bind_it_is_said_in_one_line(monkeypatch):
    import socket

    import torch

    from pp_demo.core import build_model
    from pp_demo.ranks import launch
    from pp_demo.ranks.jobs import Job
    from pp_demo.ranks.launch import PipelineError
    from pp_demo.ranks.runner import run

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setattr(launch, "free_port", lambda: taken.getsockname()[1])  # as if taken meanwhile
        ids = torch.tensor([[0, 0, 5, 6], [5, 6, 7, 8]])
        with pytest.raises(PipelineError) as failed:
            run([Job.infer(build_model("llama"), ids, (ids != 0).long())], on="ranks", timeout_s=60)
    # one line, no port number; the ranks were stopped (run's contract)
    assert (
        str(failed.value)
        == "rank 0 failed: the port picked for the ranks was taken by another program meanwhile: run again"
    )


@pytest.mark.parametrize(
    "changed, expected",
    [
        ({"RANK": "7"}, "RANK=7 with WORLD_SIZE=2: ranks run from 0 to 1"),
        ({"LOCAL_RANK": "2"}, "LOCAL_RANK=2 with WORLD_SIZE=2: ranks run from 0 to 1"),
        ({"RANK": "-1"}, "RANK='-1' is not a whole number >= 0"),
        ({"WORLD_SIZE": "0", "RANK": "0"}, "WORLD_SIZE=0: a run has at least one rank"),
        ({"MASTER_PORT": "70000"}, "MASTER_PORT=70000 is no port"),
    ],
)
def test_a_rank_outside_the_world_is_refused_before_any_rendezvous(clean_env, changed, expected):
    for name, value in {**FULL, "TORCHELASTIC_RUN_ID": "x", **changed}.items():
        clean_env.setenv(name, value)
    with pytest.raises(BadInput, match=expected.replace("(", r"\(").replace(")", r"\)")):
        check_torchrun_env()


def test_the_command_refuses_a_rank_outside_the_world_in_one_line(clean_env, capsys):
    from pp_demo.cli import main

    for name, value in {**FULL, "TORCHELASTIC_RUN_ID": "x", "RANK": "7"}.items():
        clean_env.setenv(name, value)
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "--distributed"])
    assert exit_.value.code == 2
    assert "RANK=7 with WORLD_SIZE=2" in capsys.readouterr().err.strip().splitlines()[-1]


def test_the_fork_server_alone_ignores_ctrl_c():
    """Imported first by the fork server (started as ``python -c``), the module makes it ignore
    SIGINT; imported anywhere else it changes nothing."""
    probe = "import signal, sys; import pp_demo.ranks.fork_server_signals; "
    probe += "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    as_server = [sys.executable, "-c", "import multiprocessing.forkserver; " + probe]
    elsewhere = [sys.executable, "-c", probe]
    ask = dict(env=env, capture_output=True, text=True, timeout=60, preexec_fn=interruptible)
    assert subprocess.run(as_server, **ask).stdout.strip() == "True"
    assert subprocess.run(elsewhere, **ask).stdout.strip() == "False"


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_while_the_fork_server_imports_says_one_line():
    """The fork server imports torch and transformers for seconds after it appears: a Ctrl-C
    then used to print its interrupted import's traceback around the one line."""

    def session(pid):
        return [p for p, (_, sid) in _processes().items() if sid == pid and p != pid]

    command = [sys.executable, "-m", "pp_demo", "reproduce", "--distributed"]
    code, out, err, _ = _interrupt(command, session, at_least=1, after_s=0.3)
    assert code in (130, -signal.SIGINT) and "Traceback" not in err
    assert err.strip().splitlines() == [INTERRUPTED]
