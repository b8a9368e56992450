"""The files git tracks, for the tests that read the repository's own text (imported as
``git_files``, since ``tests/`` is on the path through its conftest). Standard library only, so
that a test file importing it collects anywhere.

A zip download or an unpacked sdist has no ``.git``: there these tests are skipped with the one
line ``NO_GIT``, and the other two thousand run, rather than collection failing for all of them.
"""

import subprocess
from pathlib import Path

NO_GIT = "not a git checkout (a zip download or an unpacked sdist): the tests that read git's list of files are skipped"


def tracked_files(repo: Path, *options: str) -> list[str] | None:
    """``git ls-files OPTIONS`` in ``repo``, as paths relative to it; None where ``repo`` is not
    the top of a git checkout (a copy inside another checkout would list that one's files) or
    git is not installed."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True, text=True)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != repo.resolve():
            return None
        listed = subprocess.run(["git", "ls-files", "-z", *options], cwd=repo, capture_output=True, text=True)
    except OSError:
        return None
    if listed.returncode != 0:
        return None
    return [name for name in listed.stdout.split("\0") if name]
