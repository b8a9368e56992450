"""Being one of torchrun's ranks: a whole environment or none, one line for all ranks, Ctrl-C.

torchrun starts every rank with the same command line, so every rank finds an input error at
once; printed by each it would repeat, printed by rank 0 only it would vanish when rank 0 is
not the one that failed (or when a leaked ``RANK=1`` fakes a rank). ``say_once`` lets the
first rank that gets there print, whatever its number: the ranks of one torchrun share a
parent (the agent) and a run id, and the first to create a marker file for that pair speaks.

A half-set environment (``RANK`` left over in a shell, without ``MASTER_ADDR``) would make
``torch.distributed`` fail deep inside about the missing variable, or hang on a rendezvous;
``check_torchrun_env`` names what is set and what is missing first.

Ctrl-C reaches every rank of the terminal's process group. A rank blocked inside a gloo
receive runs no Python until the receive returns, so a Python handler would wait for the peer
just interrupted, and torchrun SIGKILLs it 30 s later. ``stop_on_interrupt`` has the signal
written to a pipe the moment it arrives (``signal.set_wakeup_fd``, done in C) and a thread
waiting on that pipe say one line and end the rank at once.
"""

import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

from pp_demo.errors import BadInput

__all__ = [
    "TORCHRUN_VARS",
    "check_torchrun_env",
    "is_torchrun_rank",
    "torchrun_world_size",
    "say_once",
    "stop_on_interrupt",
    "INTERRUPTED",
    "port_taken",
]

# what torchrun sets for every rank (and the launcher's own variables, set with them)
TORCHRUN_VARS = ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
# the ones that say "this process is a rank"; MASTER_ADDR / MASTER_PORT alone are common in
# cluster shells and mean nothing on their own
_RANK_VARS = ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK")
INTERRUPTED = "interrupted: ranks stopped"
_MARKER_LIFETIME_S = 60  # the ranks of one run find the same input error within seconds


def check_torchrun_env() -> None:
    """Refuse, in one line, an environment that is partly torchrun's, or
    whose RANK and LOCAL_RANK are not inside WORLD_SIZE, or whose port
    no socket can have: before any rendezvous, which would otherwise
    wait for ranks that never come (then fail in c10d's C++ stack)."""
    present = [name for name in TORCHRUN_VARS if os.environ.get(name)]
    if not any(name in present for name in _RANK_VARS):
        return
    missing = [name for name in TORCHRUN_VARS if name not in present]
    if missing:
        raise BadInput(
            f"a half-set torchrun environment: {', '.join(present)} set but {', '.join(missing)} not; "
            "unset them (a leftover of another run?) or start the ranks with torchrun"
        )
    values = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT"):
        text = os.environ[name]
        if not text.isdigit():
            raise BadInput(
                f"{name}={text!r} is not a whole number >= 0: unset the torchrun variables or let torchrun set them"
            )
        values[name] = int(text)
    world = values["WORLD_SIZE"]
    if world < 1:
        raise BadInput("WORLD_SIZE=0: a run has at least one rank (torchrun --nproc-per-node N sets it)")
    for name in ("RANK", "LOCAL_RANK"):
        if values[name] >= world:
            raise BadInput(
                f"{name}={values[name]} with WORLD_SIZE={world}: ranks run from 0 to {world - 1}; "
                "unset the torchrun variables (a leftover of another run?) or let torchrun set them"
            )
    if not 1 <= values["MASTER_PORT"] <= 65535:
        raise BadInput(f"MASTER_PORT={values['MASTER_PORT']} is no port: give one in 1..65535")


def is_torchrun_rank() -> bool:
    """This process is one of torchrun's ranks: every variable torchrun sets is there. The one
    test of it (``check_torchrun_env`` refuses an environment with only some of them)."""
    return all(os.environ.get(name) for name in TORCHRUN_VARS)


def torchrun_world_size() -> int:
    """How many ranks torchrun started (on one of them)."""
    return int(os.environ["WORLD_SIZE"])


def _first_to_speak() -> bool:
    """Under torchrun, True for the first rank of this run to ask, False for the others."""
    # the agent: the parent, or the parent of the guard a check rank runs under (PP_DEMO_AGENT_PID)
    agent = os.environ.get("PP_DEMO_AGENT_PID") or str(os.getppid())
    key = f"{os.environ['TORCHELASTIC_RUN_ID']}-{os.environ['MASTER_PORT']}-{agent}"
    marker = os.path.join(tempfile.gettempdir(), f"pp_demo_said_{''.join(c for c in key if c.isalnum() or c == '-')}")
    with contextlib.suppress(OSError):  # a stale marker of an earlier run with the same key
        if time.time() - os.path.getmtime(marker) > _MARKER_LIFETIME_S:
            os.remove(marker)
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:  # no writable temporary folder: better twice than never
        return True
    return True


def say_once(line: str) -> None:
    """``line`` on stderr, by one rank only under torchrun (whichever gets there first)."""
    if not is_torchrun_rank() or _first_to_speak():
        print(line, file=sys.stderr, flush=True)


_watching = False  # stop_on_interrupt is active (python -m pp_demo enters it, then the CLI again)


def _stop_when_signalled(read_fd: int) -> None:
    while True:
        got = os.read(read_fd, 1)
        if not got:  # the run ended and closed the pipe
            os.close(read_fd)
            return
        if got[0] == signal.SIGINT:
            say_once(INTERRUPTED)
            os._exit(130)  # no clean-up to wait for: torchrun stops the other ranks


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """On a torchrun rank: Ctrl-C prints ``INTERRUPTED`` once and ends the rank at once,
    even inside a blocking receive. Elsewhere nothing changes (``KeyboardInterrupt``)."""
    global _watching
    if _watching or not is_torchrun_rank() or threading.current_thread() is not threading.main_thread():
        yield
        return
    _watching = True
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous_fd = signal.set_wakeup_fd(write_fd)
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)  # the thread handles it
    threading.Thread(target=_stop_when_signalled, args=(read_fd,), daemon=True).start()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)  # the thread reads the end of the pipe and returns
        _watching = False


def port_taken(cause: str) -> str | None:
    """The sentence for a rank that could not listen on its rendezvous port, else None.

    torchrun's own ``--master-port`` is bound by torchrun before any rank runs (the README's
    table of errors covers it); the ports pp_demo picks for the ranks it starts itself are free
    when picked, so a taken one was taken since, by another program."""
    if "EADDRINUSE" not in cause and "Address already in use" not in cause:
        return None
    return "the port picked for the ranks was taken by another program meanwhile: run again"
