"""The options more than one command takes, each stated once: one meaning, one help text.

Where a default legitimately differs per command (the families a command runs, the device),
the helper takes it and ``HELP``'s template states it the same way for every command
(``tests/test_cli.py`` reads each command's ``--help`` against these templates).
"""

import argparse
from collections.abc import Sequence
from typing import Any

from pp_demo.errors import BadInput
from pp_demo.pipeline.families import FAMILIES
from pp_demo.pooling.rules import PADDED_RULES
from pp_demo.verify.tolerances import DTYPES

HELP = {
    "--family": "which tiny seeded models to build, by family (default: {default}; of: {choices})",
    "--rule": "pooling rules of the last stage (default: each family's ColossalAI 0.5.0 rule and the fix; of: "
    + ", ".join(PADDED_RULES)
    + ")",
    "--cases": "padding cases (default: all: {choices})",
    "--device": "cpu, or a GPU this torch sees (default: {default})",
    "--dtype": "precision of the model and of its model.forward reference, judged with that precision's tolerance "
    "(default: fp32)",
    "--attn": "attention implementation (default: what transformers picks)",
    "--distributed": "run the stages as ranks, one per stage (spawned here, or the ranks of "
    "torchrun --nproc-per-node STAGES -m pp_demo JOB --distributed)",
    "--out": "where to write {what} (default: {default})",
    "--force": "replace an --out file of more {what} than this run",
}


def positive(text: str) -> int:
    """An argparse type: an int >= 1 (sizes and counts; 0 would fail deep inside a rank)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def at_least_0(text: str) -> int:
    """An argparse type: an int >= 0 (untimed runs)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer of 0 or more, got {text!r}")
    return int(text)


def integer(text: str) -> int:
    """An argparse type: any int, its range left to the function it is given to (the checker's)."""
    if not text.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(text)


def device(text: str) -> str:
    """An argparse type: a device this torch can use, checked before any model is built."""
    from pp_demo.pipeline.validate import check_device

    try:
        return check_device(text)
    except BadInput as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_family(
    job: Any, default: list[str] | None, shown: str = "", choices: Sequence[str] = FAMILIES, nargs: str | None = "+"
) -> None:
    """``--family``: the families a command runs; ``shown`` states a default of None (``nargs=None``: one)."""
    job.add_argument(
        "--family",
        nargs=nargs,
        choices=list(choices),
        default=default,
        metavar="FAMILY",
        help=HELP["--family"].format(default=shown or " ".join(default or ()), choices=", ".join(choices)),
    )


def add_rule(job: argparse.ArgumentParser) -> None:
    job.add_argument("--rule", nargs="+", choices=PADDED_RULES, metavar="RULE", help=HELP["--rule"])


def add_cases(job: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    job.add_argument(
        "--cases",
        nargs="+",
        choices=list(choices),
        metavar="CASE",
        help=HELP["--cases"].format(choices=", ".join(choices)),
    )


def add_device(job: argparse.ArgumentParser, default: str | None = None) -> None:
    """``--device``, checked against this torch; ``None``: cuda when available, decided by the run."""
    shown = default or "cuda when available"
    job.add_argument("--device", type=device, default=default, help=HELP["--device"].format(default=shown))


def add_dtype(job: argparse.ArgumentParser) -> None:
    job.add_argument("--dtype", choices=list(DTYPES), default="fp32", help=HELP["--dtype"])


def add_attn(job: argparse.ArgumentParser) -> None:
    job.add_argument("--attn", choices=["eager", "sdpa"], default=None, help=HELP["--attn"])


def add_distributed(job: argparse.ArgumentParser) -> None:
    job.add_argument("--distributed", action="store_true", help=HELP["--distributed"])


def add_out(job: argparse.ArgumentParser, what: str, default: str) -> None:
    """``--out``, None when not given: each command resolves its own default (``default`` says which)."""
    job.add_argument("--out", default=None, help=HELP["--out"].format(what=what, default=default))


def add_force(job: argparse.ArgumentParser, what: str) -> None:
    job.add_argument("--force", action="store_true", help=HELP["--force"].format(what=what))
