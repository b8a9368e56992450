"""``python -m pp_demo``: the workbook's jobs from a shell.

One module per group of commands, each command's parser beside its handler: ``padding``,
``check``, ``records``, ``room``. The options more than one command takes are stated once, in
``options``. A handler only calls the package, where the work and its checks live, and prints.
"""

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from pp_demo.cli.check import add_check_job
from pp_demo.cli.options import Combined
from pp_demo.cli.padding import add_padding_jobs
from pp_demo.cli.records import add_record_jobs
from pp_demo.cli.room import add_room_jobs
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import PADDED_RULES
from pp_demo.ranks.torchrun_env import INTERRUPTED, check_torchrun_env, say_once, stop_on_interrupt

__all__ = ["PADDED_RULES", "build_parser", "main"]  # PADDED_RULES: the rules the commands offer


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors torchrun's ranks print once, not once per rank, and
    whose list options combine when given again (``Combined``); each command's parser is one.

    ``options``: a function that adds a command's options when its parser is first used (to parse,
    or to print its help). An instrument's options name the instrument's own lists (ColossalAI's
    trees, the engine's modes): so the instrument is imported only when one of its jobs runs."""

    def __init__(self, *args: Any, options: Callable[[argparse.ArgumentParser], None] | None = None, **keywords: Any):
        super().__init__(*args, **keywords)
        self._options = options

    def _add_options(self) -> None:
        if self._options is not None:
            options, self._options = self._options, None
            options(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._add_options()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_options()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_options()
        return super().format_help()

    def add_argument(self, *names: Any, **keywords: Any) -> argparse.Action:
        if keywords.get("nargs") == "+" and "action" not in keywords:
            keywords["action"] = Combined
        return super().add_argument(*names, **keywords)

    def error(self, message: str) -> NoReturn:
        say_once(f"{self.format_usage().rstrip()}\n{self.prog}: error: {message}")
        self.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m pp_demo",
        description="Reproduce the pooled-token bug of pipeline-parallel sequence classification "
        "(ColossalAI 0.5.0, issue 6457) and its pad == eos cousin.",
    )
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    add_padding_jobs(jobs)
    add_check_job(jobs)
    add_record_jobs(jobs)
    add_room_jobs(jobs, build_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # check runs itself again, as its own child
    try:
        with stop_on_interrupt():
            if args.job != "doctor":  # every job that may join ranks: the variables first, before any rendezvous
                check_torchrun_env()
            code: int = args.run(args)
        return code
    except BadInput as error:  # pp_demo's own input errors only: anything else keeps its traceback
        # under torchrun every rank finds the same error: the first one to get here says it, once
        say_once(f"{parser.prog}: error: {' '.join(str(error).split())}")
        parser.exit(2)
    except KeyboardInterrupt:  # the ranks are stopped on the way out (pp_demo.ranks.launch)
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of the output left (`| head`): nothing more to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet
        return 141
