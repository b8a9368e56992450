"""The tests run from a copy without ``.git`` (a zip download): what needs git's list of files is
skipped with one line saying so, and collection goes on (before, ``git ls-files`` at
import failed the collection of every test)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from git_files import NO_GIT, tracked_files

REPO = Path(__file__).resolve().parents[2]
# what a copy needs to collect test_pointers.py: the settings, the shared conftest, the helper
NEEDED = ("pyproject.toml", "tests/conftest.py", "tests/git_files.py", "tests/repo/test_pointers.py")


def _copy(to: Path) -> Path:
    for name in NEEDED:
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, to / name)
    return to


def test_the_checkout_lists_its_files():
    if not (REPO / ".git").exists():
        pytest.skip(NO_GIT)
    assert "tests/git_files.py" in tracked_files(REPO, "--cached", "--others", "--exclude-standard")


def test_a_copy_without_git_has_no_list_even_inside_another_checkout(tmp_path):
    assert tracked_files(_copy(tmp_path / "zip")) is None
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the copy inside another checkout is not tried")
    subprocess.run(["git", "init", "-q", str(tmp_path / "outer")], check=True)
    assert tracked_files(_copy(tmp_path / "outer" / "zip")) is None


def test_a_copy_without_git_collects_and_skips_the_pointer_tests_in_one_line(tmp_path):
    tree = _copy(tmp_path / "zip")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "tests/repo/test_pointers.py"]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    # this file alone: nothing left to run (exit 5), where a failed collection is exit 2
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr
    assert "error" not in done.stdout.lower() and "1 skipped" in done.stdout
    assert len([line for line in done.stdout.splitlines() if NO_GIT in line]) == 1
