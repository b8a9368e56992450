"""docs/gpu.md's way onto a GPU machine that reaches no package index, performed as written: its
commands are read from the page. The download needs an index (step 1's list is checked against
the lock instead); the GPU machine's half (step 2) is run as printed, on a fresh venv of this
Python, with a wheel folder holding the lock's setuptools: the workbook builds from there."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SECTION = "## A GPU machine without a package index"


def _blocks() -> list[list[str]]:
    """The section's bash blocks, each as its commands (continued lines joined, comments cut)."""
    text = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", "", "\n".join(line.strip() for line in block.splitlines()))
        blocks.append([line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()])
    return blocks


def test_the_download_takes_every_package_of_the_lock_but_torch_for_every_python_of_the_lock(tmp_path):
    download, _, run = _blocks()
    (tmp_path / "constraints").mkdir()
    shutil.copy(ROOT / "constraints" / "pinned.lock.txt", tmp_path / "constraints")
    subprocess.run(["bash", "-c", download[0]], cwd=tmp_path, check=True, timeout=60)

    def names(path):
        return {line.split("==")[0] for line in path.read_text().splitlines() if "==" in line}

    pins = names(tmp_path / "gpu.lock.txt")
    assert pins == names(ROOT / "constraints" / "pinned.lock.txt") - {"torch"}
    assert {"matplotlib", "nbval", "transformers", "setuptools"} <= pins
    loop = " ".join(download[1:])
    assert "for version in 3.11 3.12 3.13" in loop and "--python-version $version" in loop  # nothing edited by hand


def test_the_run_uses_the_makefiles_nbval_flags_on_every_notebook_but_06_and_11(tmp_path):
    """06 needs ColossalAI and 11 DeepSpeed, neither in the lock the wheels come from."""
    *_, run = _blocks()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    nbval = re.search(r"^NBVAL\s*:=\s*(.*)$", makefile, flags=re.M)[1].split()
    pytest_line = next(line for line in run if " -m pytest " in line)
    assert pytest_line.split(" $(")[0].split()[3:] == nbval
    selection = "$(" + pytest_line.split(" $(", 1)[1]
    (tmp_path / "notebooks").mkdir()
    for notebook in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        (tmp_path / "notebooks" / notebook.name).write_text("{}")
    chosen = subprocess.run(["bash", "-c", f"echo {selection}"], cwd=tmp_path, capture_output=True, text=True).stdout
    every = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    expected = [f"notebooks/{p.name}" for p in every if not p.name.startswith(("06_", "11_"))]
    assert chosen.split() == expected and len(expected) == len(every) - 2


def test_every_nbval_run_on_the_page_uses_the_makefiles_flags_and_leaves_out_06_and_11():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    nbval = re.search(r"^NBVAL\s*:=\s*(.*)$", makefile, flags=re.M)[1].split()
    page = re.sub(r"\\\n\s*", "", (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8"))
    runs = re.findall(r"-m pytest (--nbval[^\n]*)", page)
    assert len(runs) >= 2  # the kept torch's check and this section's
    for run in runs:
        flags, selection = run.split(" $(", 1)
        assert flags.split() == nbval and "06_colossalai" in selection and "11_deepspeed" in selection, run


def _setuptools_wheel() -> pathlib.Path | None:
    """The lock's setuptools as a wheel, from what this environment holds (virtualenv embeds it)."""
    version = next(
        line.split("==")[1].split()[0]
        for line in (ROOT / "constraints" / "pinned.lock.txt").read_text().splitlines()
        if line.startswith("setuptools==")
    )
    try:
        import virtualenv
    except ImportError:
        return None
    found = list(pathlib.Path(virtualenv.__file__).parent.glob(f"seed/wheels/embed/setuptools-{version}-*.whl"))
    return found[0] if found else None


@pytest.mark.slow
def test_the_gpu_machines_half_installs_the_workbook_from_the_wheel_folder_alone(tmp_path):
    wheel = _setuptools_wheel()
    if wheel is None:
        pytest.skip("no wheel of the lock's setuptools in this environment (virtualenv's embedded ones)")
    _, install, _ = _blocks()
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "pp_demo", checkout / "pp_demo", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, checkout)
    (checkout / "gpu-wheels").mkdir()
    shutil.copy(wheel, checkout / "gpu-wheels")
    (checkout / "gpu.lock.txt").write_text(f"setuptools=={wheel.name.split('-')[1]}\n")
    # the GPU machine's python3: a fresh venv of this Python, with the setuptools its venv module gives
    machine = tmp_path / "machine"
    subprocess.run([sys.executable, "-m", "venv", str(machine)], check=True, timeout=300)
    python3 = machine / "bin" / "python3"
    script = "\n".join(["set -e", f'python3() {{ "{python3}" "$@"; }}', *install])
    done = subprocess.run(["bash", "-c", script], cwd=checkout, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    where = subprocess.run(
        [str(python3), "-c", "import pp_demo.errors, pp_demo; print(pp_demo.__file__)"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(checkout / "gpu-site"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0 and where.stdout.startswith(str(checkout / "gpu-site")), where.stderr
