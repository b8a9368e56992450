"""The options more than one command takes, each stated once: one meaning, one help text.

Where a command's default or choices legitimately differ (the families it runs, the device),
``add`` takes them and the option's one template states them the same way for every command
(``tests/test_cli.py`` reads each command's ``--help`` against these templates).
"""

import argparse
from collections.abc import Callable
from typing import Any

from pp_demo.core import CASES, FAMILIES
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import PADDED_RULES
from pp_demo.verify.tolerances import DTYPES


def count(least: int, most: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``least`` to ``most`` (sizes and counts). The bottom, since
    0 would fail deep inside a rank; the top, since ``int`` takes ``--repeats 99999999999999999999``
    and the run then never ends (or a size asks for more memory than any machine holds)."""

    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or not least <= int(text) <= most:
            raise argparse.ArgumentTypeError(f"expected an integer from {least} to {most}, got {text!r}")
        return int(text)

    parse.__name__ = f"count from {least} to {most}"  # argparse's name for it in its own messages
    return parse


def integer(text: str) -> int:
    """An argparse type: any int, its range left to the function it is given to (the checker's)."""
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(text)


def integer_up_to(most: int) -> Callable[[str], int]:
    """An argparse type: an int of at most ``most``, its lower end left to the function it is given
    to (the checker's, which says why in the API's words); the top here, since a battery of
    ``--batch-sizes 99999999999999999999`` rows is accepted by ``int`` and never finishes."""

    def parse(text: str) -> int:
        value = integer(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"expected an integer of at most {most}, got {text!r}")
        return value

    parse.__name__ = f"integer up to {most}"
    return parse


def device(text: str) -> str:
    """An argparse type: a device this torch can use, checked before any model is built."""
    from pp_demo.ranks.validate import check_device

    try:
        return check_device(text)
    except BadInput as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class Combined(argparse.Action):
    """A list option (``nargs="+"``) given more than once: the values of every time it is given,
    in order, over the default. argparse's own keeps only the last, so ``reproduce --rule count
    --rule first_pad`` ran first_pad alone, without a word; its ``extend`` adds to the default."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None) -> None:
        given = getattr(namespace, self.dest, None)
        earlier = [] if given is None or given is self.default else list(given)
        setattr(namespace, self.dest, earlier + list(values))


# flag -> (argparse's keywords, the help's template): {default} and {choices} are filled from the
# keywords a command gives, {what} from its own words (what --out writes, what --force counts)
OPTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "--family": (
        {"nargs": "+", "choices": list(FAMILIES), "metavar": "FAMILY"},
        "which tiny seeded models to build, by family (default: {default}; supported: {choices})",
    ),
    "--rule": (
        {"nargs": "+", "choices": PADDED_RULES, "metavar": "RULE"},
        "pooling rules of the last stage (default: each family's ColossalAI 0.5.0 rule and the fix; of: {choices})",
    ),
    "--cases": ({"nargs": "+", "choices": list(CASES), "metavar": "CASE"}, "padding cases (default: all: {choices})"),
    "--device": ({"type": device}, "cpu, or a GPU this torch sees (default: {default})"),
    "--dtype": (
        {"choices": list(DTYPES), "default": "fp32"},
        "precision of the model and of its model.forward reference, judged with that precision's tolerance "
        "(default: {default})",
    ),
    "--attn": ({"choices": ["eager", "sdpa"]}, "attention implementation (default: what transformers picks)"),
    "--distributed": (
        {"action": "store_true"},
        "run the stages as ranks, one per stage (spawned here, or the ranks of "
        "torchrun --nproc-per-node STAGES -m pp_demo JOB --distributed)",
    ),
    "--out": ({}, "where to write {what} (default: {default})"),
    "--force": ({"action": "store_true"}, "replace an --out file of more {what} than this run"),
}
WHEN_NONE = {"--device": "cuda when available"}  # decided by the run itself


def add(job: Any, flag: str, shown: str = "", what: str = "", **keywords: Any) -> None:
    """``flag`` on ``job``: the shared keywords, with a command's own over them (its default,
    its choices), stated by the one template; ``shown`` says what a default of None means."""
    keywords = {**OPTIONS[flag][0], **keywords}
    default = keywords.get("default")
    if isinstance(default, list):
        default = " ".join(default)
    shown = shown or (WHEN_NONE.get(flag, "") if default is None else str(default))
    choices = ", ".join(keywords.get("choices", ()))
    job.add_argument(flag, help=OPTIONS[flag][1].format(default=shown, choices=choices, what=what), **keywords)
