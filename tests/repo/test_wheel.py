"""pp_demo from a wheel: built, installed non-editable into a fresh venv outside the checkout,
and every command run from a temp folder, so nothing may reach into the checkout by itself.

The venv gets the test venv's dependencies through one ``.pth`` line (its site-packages on the
path; the ``.pth`` files there, such as an editable pp_demo's, are not processed), so nothing is
downloaded and it takes seconds. Paths to the checkout (pins, notebooks, results) are given
explicitly, as a user of an installed pp_demo would. Three commands run a dry form, since their
full runs take minutes: ``bench`` refuses a page without its markers before measuring,
``verify-pr`` says in one line that no sdist is cached (the shipped patches are read apart),
and ``lab`` hands ``--version`` to JupyterLab instead of serving.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pp_demo", "pyproject.toml", "README.md", "LICENSE")
TIMEOUT_S = 180


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python, run folder)``: a venv with the wheel installed, and an empty folder to run in."""
    top = tmp_path_factory.mktemp("wheel")
    assert not top.resolve().is_relative_to(REPO)
    source = top / "source"  # a copy: the build's build/ and egg-info stay out of the checkout
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy
        copy(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run(
        [*pip[:3], "wheel", *pip[3:], "--no-index", "--no-deps", "--no-build-isolation", "-w", top / "dist", source],
        check=True,
        timeout=TIMEOUT_S,
    )
    (wheel,) = (top / "dist").glob("pp_demo-*.whl")
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=TIMEOUT_S)
    python = venv / "bin" / "python"
    subprocess.run([*pip[:3], "--python", python, "install", *pip[3:], "--no-index", "--no-deps", wheel], check=True)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "_test_venv_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run = top / "run"
    run.mkdir()
    return python, run


def _run(installed, *args, env=None):
    python, run = installed
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no checkout on the path
    return subprocess.run(
        [python, *args],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**environ, "PIP_NO_INDEX": "1", **(env or {})},
    )


def test_the_wheel_imports_its_own_copy_with_its_patches(installed):
    python, _ = installed
    code = (
        "import pp_demo, pathlib\n"
        "from pp_demo.instruments.pull_request.sdists import PATCHES, CHANGE, CHANGE_FILES, split_patch\n"
        "print(pathlib.Path(pp_demo.__file__).parent)\n"
        "print(sorted(split_patch((PATCHES / CHANGE).read_text())) == sorted(CHANGE_FILES))\n"
        "print(len(list(PATCHES.glob('*.patch'))))\n"
    )
    done = _run(installed, "-c", code)
    assert done.returncode == 0, done.stderr
    where, change_parts, patches = done.stdout.split()
    assert Path(where).is_relative_to(python.parent.parent) and not Path(where).is_relative_to(REPO)
    assert (change_parts, patches) == ("True", "2")  # the change's three files; the change and its follow-up


def test_the_commands_run_from_the_wheel(installed):
    _, run = installed
    empty = run / "empty"
    empty.mkdir()
    commands = {
        "reproduce": ["-m", "pp_demo", "reproduce"],
        "check": ["-m", "pp_demo", "check", "pp_demo.ranks.in_process:fixed_pipeline"],
        "explore": ["-m", "pp_demo", "explore", "0", "0", "5", "6", "7", "8"],
        "table": ["-m", "pp_demo", "table"],
        "doctor": ["-m", "pp_demo", "doctor", "--checkout", str(REPO)],
        "bench": ["-m", "pp_demo", "bench", "--stages", "9", "--out", str(run / "bench")],
        "verify-pr": [
            *("-m", "pp_demo", "verify-pr", "--cache", str(empty), "--wheelhouse", str(empty)),
            *("--out", str(run / "verify_pr.json")),
        ],
        "lab": ["-m", "pp_demo.workshop.lab", "--checkout", str(REPO), "--version"],
        "gpu-check": ["-m", "pp_demo", "gpu-check", "--dry-run", "--checkout", str(REPO)],
        "gpu-check here": ["-m", "pp_demo", "gpu-check", "--dry-run"],
        "colossalai-engine": ["-m", "pp_demo", "colossalai-engine", "--help"],
        "engine record": ["-c", "from pp_demo.records.engine import RESULTS; print(RESULTS)"],
        "report": [
            "-c",
            f"from pp_demo.records.bench import load_results, summary_lines; "
            f"print(summary_lines(load_results({str(REPO / 'results' / 'bench_cpu.json')!r}))[0])",
        ],
    }
    with ThreadPoolExecutor(4) as pool:
        done = dict(zip(commands, pool.map(lambda args: _run(installed, *args), commands.values()), strict=True))
    ok = {name: d.returncode for name, d in done.items()}
    # what each answers, from the specification: count pools left-padded rows wrong, the fix right
    assert "llama    count              row matches model.forward: [False, True]" in done["reproduce"].stdout
    assert done["check"].stdout.startswith("PASS") and "rightmost_non_pad" in done["check"].stdout
    assert "true last real token (from the mask): 5" in done["explore"].stdout
    assert any(line.split()[:4] == ["left", "[0,0,5,6,7,8]", "5", "3"] for line in done["table"].stdout.splitlines())
    assert "imports this pp_demo" in done["doctor"].stdout and "all set" in done["doctor"].stdout
    refused = "--stages 9 with --layers 6: each stage holds at least one layer"
    assert refused in done["bench"].stderr and not (run / "bench.json").exists()
    assert "no colossalai-0.5.0.tar.gz in the cache" in done["verify-pr"].stderr
    assert "JupyterLab: http://127.0.0.1:" in done["lab"].stdout
    assert done["lab"].stdout.split()[-1][:1].isdigit()  # JupyterLab's own --version: it got that far
    assert done["report"].stdout.strip()
    # the notebooks and the committed record are the working directory's, or the option's
    assert "nbval 01_four_padding_rows (" in done["gpu-check"].stdout
    assert "notebooks (skip: no notebooks/ folder in . (--checkout))" in done["gpu-check here"].stdout
    assert "--schedule" in done["colossalai-engine"].stdout
    assert done["engine record"].stdout.strip() == "results/colossalai_engine.json"
    assert not (run / "results").exists() and not (run / "verify_pr.json").exists()
    assert ok == {**dict.fromkeys(commands, 0), "bench": 2, "verify-pr": 2}, {
        n: d.stderr[-300:] for n, d in done.items() if d.returncode
    }
