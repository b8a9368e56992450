"""Every bad input a new user might type: one line on stderr, exit status 2, no traceback."""

import pytest
from helpers import cli_error as _error

from pp_demo.cli import PADDED_RULES, build_parser
from pp_demo.core import CORE_RULES, RULES, build_model
from pp_demo.pooling.padding_table import padding_table


def test_a_callable_from_a_module_that_does_not_exist(capsys):
    line = _error(capsys, "check", "nonexistent.module:func")
    assert "cannot import nonexistent.module" in line and "PYTHONPATH" in line


def test_a_model_path_that_does_not_exist_is_not_sent_to_the_hub(capsys, tmp_path):
    line = _error(capsys, "check", "pp_demo.verify.compare:forward_logits", "--model-path", str(tmp_path / "nope"))
    assert "no such folder" in line and "Repo id" not in line


def test_an_empty_model_folder(capsys, tmp_path):
    line = _error(capsys, "check", "pp_demo.verify.compare:forward_logits", "--model-path", str(tmp_path))
    assert "no config.json" in line


def test_a_model_folder_with_a_config_and_no_weights(capsys, tmp_path):
    build_model("llama").config.save_pretrained(tmp_path)
    line = _error(capsys, "check", "pp_demo.verify.compare:forward_logits", "--model-path", str(tmp_path))
    assert line.startswith(f"python -m pp_demo: error: --model-path {tmp_path}: cannot load it (")


def test_the_packed_batch_rule_is_not_offered_where_no_lengths_exist(capsys):
    assert "known_lengths" not in PADDED_RULES and set(PADDED_RULES) == set(RULES) - {"known_lengths"}
    for argv in (["table", "--rules"], ["reproduce", "--rule"], ["families", "--rule"]):
        assert "invalid choice: 'known_lengths'" in _error(capsys, *argv, "known_lengths")


def test_the_table_says_why_a_packed_batch_rule_cannot_run_there():
    with pytest.raises(ValueError, match="known_lengths.*padded rows only"):
        padding_table(["count", "known_lengths"])


def test_table_help_names_the_default_rules_it_shows(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["table", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"default: the review table's {', '.join(CORE_RULES)}" in help_text
    assert "default: all" not in help_text.split("--rules")[1].split("--cases")[0]


@pytest.mark.parametrize("device, expected", [("tpu", "'tpu' is not a device"), ("cuda:99", "no CUDA device")])
def test_a_device_this_torch_cannot_use(capsys, monkeypatch, device, expected):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a CPU-only laptop
    for job in (["reproduce"], ["check", "pp_demo.verify.compare:forward_logits"]):
        assert expected in _error(capsys, *job, "--device", device)


@pytest.mark.parametrize("flag, value", [("--micro-batches", "0"), ("--hidden", "-3"), ("--layers", "two")])
def test_bench_sizes_must_be_positive_integers(capsys, flag, value):
    assert f"argument {flag}: expected a positive integer, got '{value}'" in _error(capsys, "bench", flag, value)


def test_every_command_shows_each_shared_option_with_its_one_help_text(monkeypatch):
    import re

    monkeypatch.setenv("COLUMNS", "1000")  # one line per option: argparse would wrap it at a hyphen
    from pp_demo.cli.options import OPTIONS
    from tools.cli_reference import subcommands

    seen: dict[str, set[str]] = {}
    for name, parser in subcommands(build_parser()).items():
        shown = " ".join(parser.format_help().split())
        for action in parser._actions:
            for flag in set(action.option_strings) & set(OPTIONS):
                # the template's {fields} are the command's own default, choices or words; the rest is the same
                pattern = ".+".join(re.escape(part) for part in re.split(r"\{\w+\}", OPTIONS[flag][1]))
                assert re.fullmatch(pattern, action.help), (name, flag, action.help)
                assert " ".join(action.help.split()) in shown, (name, flag)
                if "{default}" in OPTIONS[flag][1] and action.default is not None:  # the default it states is its own
                    default = action.default
                    assert f"(default: {' '.join(default) if isinstance(default, list) else default}" in action.help
                seen.setdefault(flag, set()).add(name)
    assert set(seen) == set(OPTIONS) and all(len(commands) > 1 for commands in seen.values()), seen
