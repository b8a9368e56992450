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
    assert f"argument {flag}: expected an integer from 1 to " in _error(capsys, "bench", flag, value)


HUGE = "99999999999999999999"  # taken by int(): a run asked for this many never ends
FORWARD = "pp_demo.verify.compare:forward_logits"
# every option of the command line that takes a number, with the line its top is refused with
COUNTS = {
    ("bench", "--stages"): "expected an integer from 1 to 64",
    ("bench", "--micro-batches"): "expected an integer from 1 to 1024",
    ("bench", "--hidden"): "expected an integer from 1 to 16384",
    ("bench", "--layers"): "expected an integer from 1 to 256",
    ("bench", "--seq"): "expected an integer from 1 to 16384",
    ("bench", "--batch"): "expected an integer from 1 to 4096",
    ("bench", "--warmup"): "expected an integer from 0 to 1000",
    ("bench", "--repeats"): "expected an integer from 1 to 1000",
    ("bench", "--rounds"): "expected an integer from 1 to 100",
    ("bench", "--wait"): "at most 86400",
    ("pipeline-speed", "--warmup"): "expected an integer from 0 to 1000",
    ("pipeline-speed", "--repeats"): "expected an integer from 1 to 1000",
    ("train-study", "--seeds"): "at most 1000",
    ("reproduce", "--micro-batches"): "cannot be split into",
    ("reproduce", "--split-at"): "split points must be",
    ("explore 0 5 6", "--pad"): "2**63-1",
    ("colossalai-engine", "--case-timeout"): "at most 86400",
    (f"check {FORWARD}", "--seed"): "",  # pp_demo.bounds.seed_value, its top tested in tests/ranks/test_validate.py
    (f"check {FORWARD}", "--lengths"): "expected an integer of at most 4096",
    (f"check {FORWARD}", "--batch-sizes"): "expected an integer of at most 1024",
    (f"check {FORWARD}", "--micro-batches"): "expected an integer of at most 1024",
    (f"check {FORWARD}", "--timeout"): "at most 86400",
    (f"check {FORWARD}", "--ranks"): "expected an integer from 2 to 8",
    (f"check {FORWARD}", "--atol"): "",  # a tolerance: refused by the battery's own spread, below
}


def test_every_number_option_of_the_command_line_is_in_the_list_of_bounded_ones():
    import pathlib

    from tools.cli_reference import subcommands

    parsers = subcommands(build_parser())
    for parser in parsers.values():
        parser.format_help()  # an instrument's options are added when its parser is first used
    numbers = {
        (name, flag)
        for name, parser in parsers.items()
        for action in parser._actions
        if action.type not in (None, str, pathlib.Path) and not action.choices
        for flag in action.option_strings[-1:]
        if flag.startswith("--") and "device" not in flag
    }
    listed = {(command.split()[0], flag) for command, flag in COUNTS}
    assert numbers == listed, numbers ^ listed


@pytest.mark.parametrize(
    "command, flag", [key for key, line in COUNTS.items() if line], ids=lambda part: part.split()[0]
)
def test_every_count_option_has_a_top_said_in_one_line(capsys, command, flag):
    assert COUNTS[command, flag] in _error(capsys, *command.split(), flag, HUGE)


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
