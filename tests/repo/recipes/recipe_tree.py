"""What every recipe test does with docs/architecture.md: copy the checkout, edit it as a recipe
says, run the tests the page names, and compare what changed with what the page lists.

A copy is the files git knows, committed in a fresh repository of its own, so the recipe's edits
show in its ``git status``. The notebooks the page says to run again are exactly those that fail
strict nbval in the copy: their stored outputs no longer hold.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from git_files import NO_GIT, tracked_files

from pp_demo.workshop.gpu_check import NBVAL

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "architecture.md"
COUNTS = re.compile(r"^Touches (\d+) source files?, (\d+) test files? and (\d+) notebooks?\b", re.M)
BULLET_PATH = re.compile(r"^- `((?:pp_demo|tools|tests|notebooks|docs)/[^`]+|README\.md)`", re.M)


def recipe(title: str) -> tuple[tuple[int, int, int], set[str]]:
    """The counts a recipe states and the paths its bullets name."""
    text = PAGE.read_text(encoding="utf-8")
    body = re.search(rf"^### {title}\n(.*?)(?=^#{{2,3}} |\Z)", text, flags=re.M | re.S)[1]
    counts = COUNTS.search(body)
    assert counts, f"{title}: no 'Touches N source files, M test files and K notebooks.' line"
    return (int(counts[1]), int(counts[2]), int(counts[3])), set(BULLET_PATH.findall(body))


def git(tree: Path, *args: str) -> str:
    """git's output in the copy; a git that fails fails the test."""
    return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True).stdout


def copy_tree(tmp_path: Path) -> Path:
    """A copy of the checkout's files under git, so the recipe's edits show as changes."""
    listed = tracked_files(REPO, "--cached", "--others", "--exclude-standard")
    if listed is None:
        pytest.skip(NO_GIT)
    copy = tmp_path / "tree"
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        git(copy, *args)
    return copy


def edit(tree: Path, path: str, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` with ``new``."""
    text = (tree / path).read_text()
    assert text.count(old) == 1, f"{path}: the recipe's anchor {old!r} is not there once"
    (tree / path).write_text(text.replace(old, new))


def add(tree: Path, path: str, after: str, new: str) -> None:
    """Insert ``new`` after the one occurrence of ``after`` in ``path``."""
    edit(tree, path, after, after + new)


def run_pytest(tree: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """pytest in the copy, on the copy's own package (its folder first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)


def changed_files(tree: Path) -> set[str]:
    """The paths the recipe's edits changed or added, as the copy's git sees them."""
    return {line[3:] for line in git(tree, "status", "--porcelain").splitlines()}


def check_against_page(tree: Path, title: str) -> None:
    """The recipe touched only files its section lists, in the counts it states, and the notebooks
    it lists but did not edit are exactly those whose stored outputs fail in the copy."""
    (sources, tests, notebooks), listed = recipe(title)
    touched = changed_files(tree)
    page_notebooks = {p for p in listed if p.startswith("notebooks/")}
    rerun = listed - touched  # named, not edited: notebooks to run again, and nothing else
    assert touched <= listed and rerun <= page_notebooks, f"{title}: touched {sorted(touched)}, listed {sorted(listed)}"
    kinds = [{p for p in listed if p.startswith(prefix)} for prefix in (("pp_demo/", "tools/"), "tests/")]
    assert (sources, tests, notebooks) == (len(kinds[0]), len(kinds[1]), len(page_notebooks))
    # the notebooks whose stored outputs no longer hold are the ones the page says to run again
    ran = run_pytest(tree, "-q", *NBVAL, "notebooks", timeout=600)
    failing = set(re.findall(r"^FAILED (notebooks/[^:]+\.ipynb)::", ran.stdout, flags=re.M))
    assert "passed" in ran.stdout and failing == rerun, ran.stdout[-1500:]
