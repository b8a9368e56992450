"""``python -m pp_demo check``'s run (its flags: ``pp_demo.cli.check``), its verdict as an exit code.

Exit codes: ``pp_demo.verify.checker.report`` (a usage error printed as ``error: ...``). One
progress line per batch goes to stderr, the report to stdout; under torchrun only the last rank
(the one holding the logits) prints, and every rank exits with the same code.

The command runs the checker in a child process it watches (``pp_demo.verify.checker.guard``),
so a callable that ends its process (``os._exit``, a crash, a signal) is a verdict, exit 3; a
stop from outside (Ctrl-C, SIGTERM from ``timeout`` or a CI limit) is said as one, exit 130 or 143.

The child speaks through copies of its stdout and stderr taken before the callable's module is
imported, so a callable that closes ``sys.stdout`` or sets it to ``None`` cannot silence the
verdict; and it leaves with ``os._exit`` once the verdict is out, so a thread the callable left
running (daemon or not) cannot keep it alive, nor the interpreter's teardown crash under it.
"""

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:
    from pp_demo.verify.checker.guard import Journal

__all__ = ["run_check"]


def _speaks() -> bool:
    """Outside torchrun, or its last rank."""
    from pp_demo.ranks.torchrun_env import is_torchrun_rank

    return not is_torchrun_rank() or os.environ["RANK"] == str(int(os.environ["WORLD_SIZE"]) - 1)


Wrap = Callable[[Any], Any]  # what the imported callable becomes before it is checked (an engine's adapter)


def run_check(args: argparse.Namespace, wrap: Wrap | None = None) -> int:
    """The guard, which starts the checker as its child; or, in the child, the checker. ``wrap``
    turns the imported callable into the forward to check (``pp_demo.deepspeed.check``: a builder)."""
    from pp_demo.errors import BadInput
    from pp_demo.ranks.torchrun_env import say_once
    from pp_demo.verify.checker.guard import (
        EXIT_OF_STOP,
        JOURNAL,
        STOPPED,
        Journal,
        StoppedFromOutside,
        guard,
        stopped_by_sigterm,
    )

    argv = getattr(args, "argv", None)
    if os.environ.get(JOURNAL) is None and argv is not None:
        code = guard(argv, _speaks())
        if code == 2:  # a usage error, said by the child: ends the command as any other usage error does
            raise SystemExit(2)
        return code
    journal = Journal(os.environ.get(JOURNAL))
    stopped_by_sigterm()
    # the guard's child: streams of its own; in-process (no guard), the caller's
    out, err = (_own_copy(sys.stdout), _own_copy(sys.stderr)) if journal.path else (sys.stdout, sys.stderr)
    try:
        code = _check(args, _speaks(), journal, out, err, wrap)
    except (KeyboardInterrupt, StoppedFromOutside) as stop:
        which = signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM
        for each in STOPPED:  # a second signal (the guard's, passed on) changes nothing now
            signal.signal(each, signal.SIG_IGN)
        if _speaks():
            print(STOPPED[which], file=err, flush=True)
        code = EXIT_OF_STOP[which]
    except BadInput as error:
        journal.write("end", 2)
        if journal.path is None:  # not the guard's child (no guard to leave for): main says it
            raise
        sys.stderr = err  # said as the command says a usage error (pp_demo.cli.main), then left at once
        say_once(f"python -m pp_demo: error: {' '.join(str(error).split())}")
        _leave(2, out, err)
    journal.write("end", code)
    if journal.path is None:
        return code
    _leave(code, out, err)


def _own_copy(stream: "TextIO") -> "TextIO":
    """A stream on a duplicate of ``stream``'s file descriptor: the callable may close or replace
    ``sys.stdout``, never this."""
    return os.fdopen(os.dup(stream.fileno()), "w", encoding="utf-8", errors="replace", closefd=True)


def _leave(code: int, out: "TextIO", err: "TextIO") -> NoReturn:
    """The child's end, its verdict written: no interpreter teardown, which would wait on the
    callable's non-daemon threads (a hang) and run C++ destructors under an abandoned one (SIGABRT)."""
    _flush(sys.stdout, sys.stderr, out, err)
    os._exit(code)


def _flush(*streams: "TextIO | None") -> None:
    """Each stream's buffered text out, those the callable closed or set to ``None`` left be."""
    for stream in streams:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if stream is not None:
                stream.flush()


def _check(
    args: argparse.Namespace, speaks: bool, journal: "Journal", out: "TextIO", err: "TextIO", wrap: Wrap | None = None
) -> int:
    from pp_demo.ranks.torchrun_env import is_torchrun_rank
    from pp_demo.verify.checker.inputs import CallableImportFailed, load_callable, load_model
    from pp_demo.verify.checker.integrity import Snapshot
    from pp_demo.verify.checker.judge import check_forward, watching_batches
    from pp_demo.verify.checker.report import EXIT_CALLABLE_FAILED

    code = Snapshot()  # before the user's module runs: its import may patch the checker too
    journal.write("import", args.callable.partition(":")[0])
    try:
        forward = load_callable(args.callable)
    except CallableImportFailed as error:
        if speaks:
            print(f"FAIL (your callable failed): {error}", file=out, flush=True)
        return EXIT_CALLABLE_FAILED
    if wrap is not None:
        forward = wrap(forward)
    family = args.family or ("llama" if args.model_path is None else None)
    model = load_model(family, args.model_path, args.attn)
    with watching_batches(journal.write):
        report = check_forward(
            model,
            forward,
            dtype=args.dtype,
            attn_implementation=args.attn,
            device=args.device,
            atol=args.atol,
            seed=args.seed,
            lengths=args.lengths,
            batch_sizes=args.batch_sizes,
            cases=args.cases,
            micro_batches=args.micro_batches,
            timeout_s=args.timeout,
            model_path=args.model_path,
            progress=(lambda line: print(line, file=err, flush=True)) if speaks else None,
        )
    changed = code.changed()
    # at import, before check_forward's own watch begins
    if changed is not None and report.exit_code != EXIT_CALLABLE_FAILED:
        if speaks:
            line = f"FAIL (your callable failed): it replaced the checker's own {changed}: no verdict"
            print(line, file=out, flush=True)
        return EXIT_CALLABLE_FAILED
    if speaks:
        _flush(sys.stdout)  # what the callable printed comes before the report
        print(report.summary(), file=out, flush=True)
    if is_torchrun_rank():
        # every rank has the report now; leave without the interpreter's teardown, which can
        # crash in a process group a callable left busy (and a worker may still wait on a peer)
        journal.write("end", report.exit_code)
        _leave(report.exit_code, out, err)
    return report.exit_code
