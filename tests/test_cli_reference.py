"""docs/cli.md lists every subcommand and flag of the command line, as --help prints them."""

import importlib.util
import sys

from conftest import REPO

from pp_demo.cli import build_parser


def _tool():
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "tools" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_the_parsers_help():
    tool = _tool()
    text = tool.DOC.read_text()
    assert tool.rendered(text) == text, "docs/cli.md is out of date: run python tools/cli_reference.py"


def test_every_subcommand_and_flag_is_in_docs_cli_md():
    text = (REPO / "docs" / "cli.md").read_text()
    subcommands = _tool().subcommands(build_parser())
    assert {"table", "explore", "reproduce", "families", "check", "bench", "train-study", "verify-pr"} <= set(
        subcommands
    )
    for name, parser in subcommands.items():
        assert f"### `{name}`" in text
        for action in parser._actions:
            for flag in action.option_strings:
                assert f"python -m pp_demo {name}" in text and flag in text.split(f"### `{name}`")[1], (name, flag)
