"""``python -m pp_demo check``'s run (its flags: ``pp_demo.cli.check``), its verdict as an exit code.

Exit codes: ``pp_demo.verify.checker.report`` (a usage error printed as ``error: ...``). One
progress line per batch goes to stderr, the report to stdout; under torchrun only the last rank
(the one holding the logits) prints, and every rank exits with the same code.

The command runs the checker in a child process it watches (``pp_demo.verify.checker.guard``),
so a callable that ends its process (``os._exit``, a crash, a signal) is a verdict, exit 3; a
stop from outside (Ctrl-C, SIGTERM from ``timeout`` or a CI limit) is said as one, exit 130 or 143.
"""

import argparse
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pp_demo.verify.checker.guard import Journal

__all__ = ["run_check"]


def _speaks() -> bool:
    """Outside torchrun, or its last rank."""
    from pp_demo.ranks.launch import launched_by_torchrun

    return not launched_by_torchrun() or os.environ["RANK"] == str(int(os.environ["WORLD_SIZE"]) - 1)


Wrap = Callable[[Any], Any]  # what the imported callable becomes before it is checked (an engine's adapter)


def run_check(args: argparse.Namespace, wrap: Wrap | None = None) -> int:
    """The guard, which starts the checker as its child; or, in the child, the checker. ``wrap``
    turns the imported callable into the forward to check (``pp_demo.deepspeed.check``: a builder)."""
    from pp_demo.errors import BadInput
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
    try:
        code = _check(args, _speaks(), journal, wrap)
    except (KeyboardInterrupt, StoppedFromOutside) as stop:
        which = signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM
        for each in STOPPED:  # a second signal (the guard's, passed on) changes nothing now
            signal.signal(each, signal.SIG_IGN)
        if _speaks():
            print(STOPPED[which], file=sys.stderr, flush=True)
        code = EXIT_OF_STOP[which]
    except BadInput:
        journal.write("end", 2)
        raise
    journal.write("end", code)
    return code


def _check(args: argparse.Namespace, speaks: bool, journal: "Journal", wrap: Wrap | None = None) -> int:
    from pp_demo.ranks.launch import launched_by_torchrun
    from pp_demo.verify.checker.inputs import CallableImportFailed, load_callable, load_model
    from pp_demo.verify.checker.judge import check_forward, watching_batches
    from pp_demo.verify.checker.report import EXIT_CALLABLE_FAILED

    journal.write("import", args.callable.partition(":")[0])
    try:
        forward = load_callable(args.callable)
    except CallableImportFailed as error:
        if speaks:
            print(f"FAIL (your callable failed): {error}")
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
            progress=(lambda line: print(line, file=sys.stderr, flush=True)) if speaks else None,
        )
    if speaks:
        print(report.summary(), flush=True)
    journal.write("end", report.exit_code)
    if launched_by_torchrun():
        # every rank has the report now; leave without the interpreter's teardown, which can
        # crash in a process group a callable left busy (and a worker may still wait on a peer)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(report.exit_code)
    return report.exit_code
