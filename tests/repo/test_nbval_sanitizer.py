"""notebooks/sanitize.cfg really fires under nbval.

nbval silently ignores lines of a sanitize file it cannot pair up, so a broken file
would look fine until an address shows up in a diff. Here a one-cell notebook stores a
memory address different from the one it prints when re-run: strict nbval must fail it
without the sanitizer and pass it with it. pytest runs from the repository root with the
same relative path the Makefile passes.
"""

import pathlib
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from pp_demo.workshop.gpu_check import NBVAL

ROOT = pathlib.Path(__file__).resolve().parents[2]
SANITIZE = NBVAL[NBVAL.index("--nbval-sanitize-with") + 1]  # relative to the repo root
STORED = "<object object at 0x7f0012345678>\n"


def test_the_sanitize_file_has_patterns_nbval_can_read():
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((ROOT / SANITIZE).read_text())
    assert patterns, "nbval reads no regex/replace pair from the sanitize file"


@pytest.fixture(scope="module")
def address_notebook(tmp_path_factory):
    cell = new_code_cell("print(f'<object object at {hex(id(object()))}>')", execution_count=1)
    cell.outputs = [new_output("stream", name="stdout", text=STORED)]
    nb = new_notebook(
        cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    path = tmp_path_factory.mktemp("nbval") / "address.ipynb"
    nbformat.write(nb, str(path))
    return path


def _nbval(notebook, *extra):
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--nbval",
        "--nbval-current-env",
        "--nbval-cell-timeout",
        "60",
        "-p",
        "no:cacheprovider",
        *extra,
        str(notebook),
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)


def test_without_the_sanitizer_a_fresh_address_fails(address_notebook):
    result = _nbval(address_notebook)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "0x7f0012345678" in result.stdout


def test_with_the_sanitizer_a_fresh_address_passes(address_notebook):
    result = _nbval(address_notebook, "--nbval-sanitize-with", SANITIZE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
