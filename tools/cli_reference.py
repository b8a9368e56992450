"""Write the reference part of docs/cli.md from the command line's own parser.

``python -m tools.cli_reference`` replaces what lies between the two markers of docs/cli.md
with ``python -m pp_demo --help`` and every subcommand's ``--help``, at 100 columns; ``--check``
exits 1 when the file differs (``tests/test_cli_reference.py`` runs the same comparison).
Run it after adding a subcommand or a flag.
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "cli.md"
BEGIN, END = "<!-- cli-reference:begin -->", "<!-- cli-reference:end -->"
COLUMNS = "100"


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """``{name: its parser}`` for every subcommand, in the order ``--help`` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def reference() -> str:
    """The top-level help and each subcommand's, as markdown."""
    from pp_demo.cli import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COLUMNS  # argparse wraps to the terminal: fix the width
    try:
        parser = build_parser()
        parts = ["```text", parser.format_help().rstrip(), "```"]
        for name, sub in subcommands(parser).items():
            parts += ["", f"### `{name}`", "", "```text", sub.format_help().rstrip(), "```"]
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def rendered(text: str) -> str:
    """``text`` (docs/cli.md) with its reference part regenerated."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{reference()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = DOC.read_text()
    new = rendered(text)
    if "--check" in argv:
        if new != text:
            print(
                f"{DOC.relative_to(ROOT)} differs from the parser: run python -m tools.cli_reference", file=sys.stderr
            )
            return 1
        return 0
    DOC.write_text(new)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
