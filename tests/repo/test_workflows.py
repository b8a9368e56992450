"""The GitHub Actions workflows name only what exists: make targets in the Makefile, make
variables the Makefile reads, and a `pp_demo check` command line the CLI accepts.

The workflows cannot run here; these checks catch the drift that would break them there.
"""

import pathlib
import re
import shlex

import pytest
import yaml

from pp_demo.cli import build_parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
CI = ROOT / ".github" / "workflows" / "ci.yml"
EXAMPLE = ROOT / "examples" / "check-pooling-workflow.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + [EXAMPLE]


def _run_lines(path):
    """Every shell line of every step of every job (comments are gone: YAML drops them)."""
    workflow = yaml.safe_load(path.read_text())
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            yield from step.get("run", "").splitlines()


def _make_calls(lines):
    """(targets, variables) of each `make ...` command in shell lines."""
    for line in lines:
        for command in re.split(r"&&|\|\||;", line):
            words = shlex.split(command)
            if words[:1] == ["make"]:
                args = [w for w in words[1:] if not w.startswith("-")]
                yield [a for a in args if "=" not in a], [a.split("=")[0] for a in args if "=" in a]


def _makefile_text():
    """The Makefile with the files it includes (``include $(HERE)/packaging.mk``: beside it)."""
    text = (ROOT / "Makefile").read_text()
    included = re.findall(r"^include\s+(\S+)", text, re.MULTILINE)
    return "\n".join([text] + [(ROOT / name.removeprefix("$(HERE)/")).read_text() for name in included])


def _makefile_targets():
    text = _makefile_text()
    targets = set()
    for match in re.finditer(r"^([\w.\-/$() ]+?)\s*:(?![:=])", text, re.MULTILINE):
        targets.update(match.group(1).split())
    return targets


def _ci_run_targets():
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")]
    return {target for targets, _ in _make_calls(lines) for target in targets}


def test_the_makefile_parser_finds_known_targets_and_skips_variables():
    targets = _makefile_targets()
    assert {"setup", "test", "test-unit", "test-transformers5", "notebooks"} <= targets
    assert not {"VENV", "BIN", "NBVAL"} & targets  # `VENV := .venv` is an assignment, not a rule


def test_the_make_call_parser_separates_targets_from_variables():
    calls = list(_make_calls(['make lint typecheck TORCH_INDEX="$X" && make -j2 test', "echo make test"]))
    assert calls == [(["lint", "typecheck"], ["TORCH_INDEX"]), (["test"], [])]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_make_target_a_workflow_calls_exists(path):
    missing = {t for targets, _ in _make_calls(_run_lines(path)) for t in targets} - _makefile_targets()
    assert not missing, f"{path.name} calls make targets the Makefile lacks: {sorted(missing)}"


def test_every_make_variable_the_ci_workflow_sets_is_read_by_the_makefile():
    makefile = _makefile_text()
    variables = {v for _, names in _make_calls(_run_lines(CI)) for v in names}
    assert "TORCH_INDEX" in variables  # the CPU build of torch, not the multi-GB CUDA one
    unread = {v for v in variables if f"$({v})" not in makefile}
    assert not unread, f"ci.yml sets make variables the Makefile never reads: {sorted(unread)}"


def test_the_ci_workflow_runs_everything_ci_runs():
    ci_run = _ci_run_targets()
    assert {"test", "test-transformers5"} <= ci_run
    workflow = {t for targets, _ in _make_calls(_run_lines(CI)) for t in targets}
    assert ci_run <= workflow, f"ci.yml skips what .ci/run runs: {sorted(ci_run - workflow)}"


def test_the_example_workflow_check_lines_parse_as_the_cli_would():
    checks = [shlex.split(line) for line in _run_lines(EXAMPLE) if "pp_demo check" in line]
    assert checks, "the example workflow runs no `python -m pp_demo check`"
    for words in checks:
        assert words[:3] == ["python", "-m", "pp_demo"], words
        args = build_parser().parse_args(words[3:])  # exits (SystemExit) on an unknown family or flag
        assert re.fullmatch(r"[\w.]+:\w+", args.callable), args.callable
