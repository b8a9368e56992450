"""``python -m pp_demo check`` judges from outside the process the callable runs in.

A callable can end its process in ways no Python handler sees (``os._exit(0)``, a crash in C
such as a segfault, a signal); in the command's own process it would end the command with its
own exit status, and ``os._exit(0)`` would read as a pass to a CI job. So the command (the
*guard*) starts the checker again as a child, relays its output and reads the journal the child
writes as it goes (the batch it is calling, each batch's verdict, its exit code at the end). A
child that ends without its exit code ended because of the callable (or its module's import):
the guard names the batch it was on and how the process ended, and exits 3, never 0.

The child runs in a session (and so a process group) of its own, and the guard ends that whole
group once the child has ended: processes the callable forked, and left sleeping, never outlive
the command. (A process that leaves the group itself, with ``setsid``, is beyond its reach.) The
child leaves with ``os._exit`` once its verdict is out, so a thread the callable left running,
daemon or not, cannot hold the command open.

A stop from outside (SIGINT or SIGTERM sent to the guard: Ctrl-C, ``timeout``, a CI job's limit)
is not the callable's doing: the guard passes it on to the child (in its own session, a
terminal's Ctrl-C reaches the guard alone), which says so in one line and exits 130 (Ctrl-C) or
143 (SIGTERM, 128 + 15 as a shell reports it); a child that cannot say so in time is stopped, and
the guard says it instead. Never a verdict on the callable.

The guard needs only the standard library (never the user's module, torch or the model). Under
torchrun every rank is a guard with its own child, which joins the rendezvous with the rank's
variables.
"""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

__all__ = [
    "JOURNAL",
    "AGENT_PID",
    "STOPPED",
    "EXIT_OF_STOP",
    "StoppedFromOutside",
    "stopped_by_sigterm",
    "guard",
    "Journal",
]

JOURNAL = "PP_DEMO_CHECK_JOURNAL"  # set in the child: the file it writes its journal to
AGENT_PID = "PP_DEMO_AGENT_PID"  # the parent of the guard (torchrun's agent): pp_demo.ranks.torchrun_env
# what `check` exits with (re-exported by the report): 3 also when the callable's process is lost
EXIT_PASS, EXIT_MISMATCH, EXIT_USAGE, EXIT_CALLABLE_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_UNTESTED = 4  # every row matched, but the cases run pool alike under every known rule: no pass of the pooling
EXIT_STOPPED = 143  # SIGTERM from outside (128 + 15, what a shell reports for a process it ended)
_INTERRUPT_GRACE_S = 30  # after Ctrl-C or SIGTERM, how long the child may take to say so and stop
# the one line of an outside stop, by the signal (said by the child, or by the guard when the child could not)
STOPPED = {
    signal.SIGINT: "interrupted (Ctrl-C): no verdict",
    signal.SIGTERM: "stopped from outside (SIGTERM: a timeout or a CI limit?): no verdict on your callable",
}
EXIT_OF_STOP = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_STOPPED}


class StoppedFromOutside(BaseException):
    """Raised in the child's main thread by SIGTERM (``stopped_by_sigterm``): like Ctrl-C's
    ``KeyboardInterrupt``, a stop that no ``except Exception`` on the way swallows."""


def _raise_stopped(signum: int, frame: object) -> None:
    raise StoppedFromOutside


def stopped_by_sigterm() -> None:
    """In the child: SIGTERM ends the check with its one line, not as a death the guard would blame
    on the callable. A second one while it says so changes nothing."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_stopped)


class Journal:
    """The child's side: one tab-separated line per event, flushed as written."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def write(self, *fields: object) -> None:
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write("\t".join(" ".join(str(x).split()) for x in fields) + "\n")


def _relay(source: IO[str], target: "IO[str]") -> None:
    for line in source:
        target.write(line)
        target.flush()


def _how_it_ended(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed the checker's process ({name})"
    hint = ": os._exit?" if code == 0 else ""
    return f"ended the checker's process (exit status {code}{hint}) without returning"


def verdict_of_a_lost_child(events: list[list[str]], code: int) -> str:
    """The report's lines for a child that ended without its verdict, from its journal."""
    how = _how_it_ended(code)
    starts = [e for e in events if e[0] == "start"]
    done = [e for e in events if e[0] == "done"]
    importing = [e for e in events if e[0] == "import"]
    if not starts:
        if importing:
            return f"FAIL (your callable failed): importing {importing[-1][1]} {how}"
        return f"FAIL (the checker failed): its process ended (exit status {code}) before any batch ran"
    _, index, total, name, shape = starts[-1]
    passed = sum(e[2] == "ok" for e in done)
    left = int(total) - int(index)
    lines = [
        f"FAIL (your callable failed): {passed}/{total} batches match the reference",
        f"  batch {name} ({shape}): your callable {how}",
    ]
    if left:
        lines.append(f"  not run after that: the {left} later batch(es)")
    return "\n".join(lines)


class _Stop:
    """The outside stop the guard received, if any (SIGINT as ``KeyboardInterrupt``, SIGTERM by its handler)."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None

    def terminate(self, child: "subprocess.Popen[str]") -> None:
        """SIGTERM's handler: the child is told the same, says so and stops."""
        self.signal = self.signal or signal.SIGTERM
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)


def _dies_with_its_parent() -> None:
    """In the child, before it starts: on Linux, SIGKILL when the guard dies. Out of the guard's
    process group, the child would otherwise outlive a guard killed outright (SIGKILL from a CI
    runner, or torchrun's agent after its grace), a leak."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _end_group(child: "subprocess.Popen[str]") -> None:
    """SIGKILL to the child's process group: what the callable forked and left running. Called
    while the child is a zombie not yet reaped, when it can be, so its id (the group's) is not
    reused meanwhile."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing left in the group
        os.killpg(child.pid, signal.SIGKILL)


def _ended(child: "subprocess.Popen[str]") -> int:
    """Wait for the child to end, end its group while the child's id still names it, then reap it."""
    with contextlib.suppress(ChildProcessError):  # reaped already
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    _end_group(child)
    return child.wait()


def _wait(child: "subprocess.Popen[str]", stop: _Stop) -> int:
    """The child's exit code, its process group ended. Ctrl-C (``KeyboardInterrupt`` here: the
    child, in its own session, never sees a terminal's) and SIGTERM (``_Stop.terminate``) are
    passed on; the child says so and stops, or is stopped after a grace."""
    try:
        code = _ended(child)
        if stop.signal is None:
            return code
    except KeyboardInterrupt:
        stop.signal = stop.signal or signal.SIGINT
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    try:
        return child.wait(timeout=_INTERRUPT_GRACE_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        child.kill()
        return child.wait()
    finally:
        _end_group(child)


def guard(argv: Sequence[str], speaks: bool) -> int:
    """Run ``python -m pp_demo ARGV`` (a ``check`` command) as a child; its exit code, or 3
    with the verdict when it ended without one, printed by this rank even if it does not
    ``speak`` (under torchrun, naming the rank); 130 or 143 when stopped from outside."""
    stop = _Stop()
    with tempfile.TemporaryDirectory(prefix="pp_demo_check_") as folder:
        journal = Path(folder) / "journal"
        env = dict(os.environ, **{JOURNAL: str(journal)})
        env.setdefault(AGENT_PID, str(os.getppid()))
        # the child finds what this process finds (a test's or a notebook's sys.path too)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        command = [sys.executable, "-m", "pp_demo", *argv]
        child = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,  # a group of its own, ended with it (_end_group)
            preexec_fn=_dies_with_its_parent,
        )
        assert child.stdout is not None and child.stderr is not None
        pairs = ((child.stdout, sys.stdout), (child.stderr, sys.stderr))
        relays = [threading.Thread(target=_relay, args=pair, daemon=True) for pair in pairs]
        for relay in relays:
            relay.start()
        main = threading.current_thread() is threading.main_thread()
        # a timeout's, a CI limit's or torchrun's stop
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.terminate(child)) if main else None
        try:
            code = _wait(child, stop)
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
        for relay in relays:
            relay.join(timeout=5)
        lines = journal.read_text(encoding="utf-8").splitlines() if journal.is_file() else []
    events = [line.split("\t") for line in lines]
    if any(e[0] == "end" for e in events) and code >= 0:  # the child's own exit: a verdict, or its stop said
        return code
    if stop.signal is None and code in (EXIT_INTERRUPTED, -signal.SIGINT):  # the child alone got Ctrl-C
        stop.signal = signal.SIGINT
    if stop.signal is not None:  # stopped from outside: whatever the callable was doing, no verdict on it
        if code not in EXIT_OF_STOP.values():  # the child did not say so itself
            print(STOPPED[stop.signal], file=sys.stderr, flush=True)
        return EXIT_OF_STOP[stop.signal]
    # said by this rank whatever its number: the rank that would speak cannot know why this one is gone
    verdict = verdict_of_a_lost_child(events, code)
    if not speaks:
        verdict = verdict.replace("\n", f" (rank {os.environ.get('RANK')} of {os.environ.get('WORLD_SIZE')})\n", 1)
    print(verdict, flush=True)
    return EXIT_CALLABLE_FAILED
