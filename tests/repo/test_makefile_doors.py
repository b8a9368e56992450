"""Small doors of the Makefile: each wrong way in gets one line saying what to
do, from make itself, before any recipe runs (``make -n``: nothing would run anyway)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args, cwd=ROOT):
    # a make of its own, not a sub-make of `make test`'s (whose MAKELEVEL adds "Entering directory")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    return subprocess.run(["make", "-n", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


def _one_line(done):
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and done.stdout == "", done.stderr
    return lines[0]


def test_an_empty_torch_names_the_variable_not_install_envs_flag():
    line = _one_line(_make("setup", "TORCH="))
    assert "TORCH is empty" in line and "TORCH=cu128" in line and "--torch" not in line


def test_the_makefile_from_another_folder_says_how_to_run_it_in_the_checkout(tmp_path):
    line = _one_line(_make("-f", str(ROOT / "Makefile"), "reproduce", cwd=tmp_path))
    assert f"make -C {ROOT.resolve()} reproduce" in line and "packaging.mk" not in line


def test_the_makefile_run_in_the_checkout_by_minus_c_finds_packaging_mk(tmp_path):
    done = _make("-C", str(ROOT), "--no-print-directory", "test-offline", "WHEELHOUSE=wh")
    assert done.returncode == 0, done.stderr
    assert "--installer uv" in done.stdout and "INSTALLER=pip" in done.stdout  # both installers, from packaging.mk


@pytest.mark.parametrize("target", ["test", "test-notebooks", "notebooks"])
def test_the_notebook_targets_give_matplotlib_the_venvs_own_cache_not_the_per_user_one(target):
    """MPLCONFIGDIR: a per-user ~/.cache/matplotlib that other work rewrote without matplotlib's own
    fonts would put findfont warnings on a notebook's stderr (make lab and the conftest do the same)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    env.pop("MPLCONFIGDIR", None)
    shown = ["--eval", f"{target}: shown-mpl", "--eval", "shown-mpl: ; echo mpl=$(MPLCONFIGDIR)"]
    done = subprocess.run(["make", "-n", *shown, target], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    said = [line for line in done.stdout.splitlines() if line.startswith("echo mpl=")]
    assert said == [f"echo mpl={ROOT.resolve()}/.venv/share/pp_demo/matplotlib"], done.stdout + done.stderr
