"""docs/cli.md lists every subcommand and flag of the command line, as --help prints them."""

from pp_demo.cli import build_parser
from tools import cli_reference


def _tool():
    return cli_reference


def test_docs_cli_md_is_the_parsers_help():
    tool = _tool()
    text = tool.DOC.read_text()
    assert tool.rendered(text) == text, "docs/cli.md is out of date: run python -m tools.cli_reference"


def test_every_subcommand_and_flag_is_in_docs_cli_md(repo):
    text = (repo / "docs" / "cli.md").read_text()
    subcommands = _tool().subcommands(build_parser())
    assert {"table", "explore", "reproduce", "families", "check", "bench", "train-study", "verify-pr"} <= set(
        subcommands
    )
    for name, parser in subcommands.items():
        assert f"### `{name}`" in text
        for action in parser._actions:
            for flag in action.option_strings:
                assert f"python -m pp_demo {name}" in text and flag in text.split(f"### `{name}`")[1], (name, flag)
