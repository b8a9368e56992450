"""The reproduction's agreed output: one line per family and rule, left-padded row first."""

import pytest

from pp_demo.cli import main
from pp_demo.verify.compare import reproduce, reproduction_line


@pytest.mark.parametrize("family", ["llama", "qwen2", "opt"])
def test_count_rule_misses_the_left_padded_row_and_the_fix_does_not(family):
    assert reproduction_line(reproduce(family, "count")) == "row matches model.forward: [False, True]"
    assert reproduction_line(reproduce(family, "rightmost_non_pad")) == "row matches model.forward: [True, True]"


def test_cli_reproduce_prints_the_table_and_both_rules_for_the_three_families(capsys):
    assert main(["reproduce"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("judged by the true last real token")
    for family in ["llama", "qwen2", "opt"]:
        assert f"{family:<8} {'count':<18} row matches model.forward: [False, True]" in out
        assert f"{family:<8} {'rightmost_non_pad':<18} row matches model.forward: [True, True]" in out


def test_cli_flags_choose_family_rule_and_split_point(capsys):
    main(["reproduce", "--family", "opt", "--rule", "count", "--split-at", "3", "--micro-batches", "2"])
    lines = [line for line in capsys.readouterr().out.splitlines() if "row matches" in line]
    assert lines == [f"{'opt':<8} {'count':<18} row matches model.forward: [False, True]"]


@pytest.mark.parametrize("points", [["1", "3"], ["1", "2", "3"]], ids=["three-stages", "four-stages"])
def test_cli_several_split_points_run_more_stages_with_the_same_lines(capsys, points):
    main(["reproduce", "--family", "qwen2", "--split-at", *points])
    out = capsys.readouterr().out
    stages = {2: "three", 3: "four"}[len(points)]
    assert f"a {stages}-stage pipeline (all {stages} stages in this process)" in out
    assert [line for line in out.splitlines() if "row matches" in line] == [
        f"{'qwen2':<8} {'count':<18} row matches model.forward: [False, True]",
        f"{'qwen2':<8} {'rightmost_non_pad':<18} row matches model.forward: [True, True]",
    ]


@pytest.mark.parametrize("points", [["9"], ["3", "1"]])
def test_cli_bad_input_is_an_error_message_not_a_traceback(capsys, points):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "--family", "llama", "--split-at", *points])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error: split points must be strictly increasing ints in 1..3" in err and len(err.splitlines()) == 1


def test_cli_help_lists_the_supported_families(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "supported: llama, qwen2, opt, qwen3, mistral, gpt2, bloom, falcon, gptj" in help_text


def test_the_reproduction_runs_the_families_whose_colossalai_forward_counts():
    from pp_demo.verify.compare import REPRO_FAMILIES, REPRO_ROWS

    # ColossalAI 0.5.0 llama.py, qwen2.py, opt.py pool with ne(ids, pad).sum(-1) - 1 (issue 6457)
    assert REPRO_FAMILIES == ("llama", "qwen2", "opt") and REPRO_ROWS == ("left", "right")
