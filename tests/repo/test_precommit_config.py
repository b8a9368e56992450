"""The pre-commit hooks work offline and check what `make lint` and `make typecheck` check.

Offline means every hook is local and runs a tool of the project venv: nothing for
pre-commit to download. Those tools must be the ones the `dev` extra pins exactly.
"""

import pathlib
import re

import yaml

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
HOOKS = [hook for repo in CONFIG["repos"] for hook in repo["hooks"]]


def _lint_recipe():
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"^lint:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert match, "the Makefile has no lint target"
    return match.group(1)


def test_every_hook_is_local_and_runs_a_venv_tool():
    assert [repo["repo"] for repo in CONFIG["repos"]] == ["local"]
    for hook in HOOKS:
        assert hook["language"] == "system", hook["id"]
        assert hook["entry"].startswith(".venv/bin/"), hook["id"]


def test_the_checks_the_issue_asks_for_are_there():
    ids = {hook["id"] for hook in HOOKS}
    assert {"ruff-check", "ruff-format", "mypy", "notebooks-fresh-run", "check-json", "check-yaml"} <= ids


def test_scripts_the_hooks_run_exist():
    for hook in HOOKS:
        for word in hook["entry"].split():
            if word.endswith(".py"):
                assert (ROOT / word).is_file(), f"{hook['id']} runs {word}, which does not exist"


def test_the_dev_extra_pins_each_tool_exactly():
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    pins = dict(requirement.split("==") for requirement in dev)
    assert set(pins) == {"ruff", "mypy", "pre-commit", "pre-commit-hooks"}
    assert all(re.fullmatch(r"\d+(\.\d+)+", version) for version in pins.values()), pins


def test_make_lint_runs_the_notebook_check_of_the_hook():
    hook = next(hook for hook in HOOKS if hook["id"] == "notebooks-fresh-run")
    script = hook["entry"].split()[-1]
    assert script in _lint_recipe()
    assert "ruff check" in _lint_recipe() and "ruff format --check" in _lint_recipe()
