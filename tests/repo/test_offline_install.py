"""The offline install (docs/install.md, "The workshop room"): `make setup WHEELHOUSE=dir`.

The rules, from the issue: with a wheelhouse no index is seen, and each installer is told so
once (uv refuses ``--no-index`` given twice); a wheelhouse that lacks a pin of the lock is refused
before anything is installed, in one line that names it and says how to make one
(`make wheelhouse`); a wheelhouse that holds the lock installs with uv and with pip.
The real install runs on a wheelhouse of small wheels made here (the full lock is `make
test-offline`'s, minutes): a stand-in ``torch`` with the CPU label, and one dependency.
"""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tools import install_env, torch_source

ROOT = Path(__file__).resolve().parents[2]


def _wheel(folder: Path, name: str, version: str) -> Path:
    """A pure-Python wheel of ``name`` holding one empty module (PEP 427's layout, with RECORD)."""
    module, info = name.replace("-", "_"), f"{name.replace('-', '_')}-{version}.dist-info"
    files = {
        f"{module}_stand_in.py": "",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture
def lock(tmp_path):
    path = tmp_path / "lock.txt"
    path.write_text(
        "# a header, as `make lock` writes it\n"
        "torch==2.13.0              # via pp-demo\n"
        "tiny-dep==1.0              # via torch\n"
        "win-only==3.0 ; sys_platform == 'win32' and sys_platform != 'win32'  # never applies\n"
    )
    return path


@pytest.fixture
def wheelhouse(tmp_path):
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    _wheel(folder, "torch", "2.13.0+cpu")
    _wheel(folder, "tiny-dep", "1.0")
    return folder


# ---- each installer is told "no index" once


@pytest.mark.parametrize("uv", [Path("tools/bin/uv"), None], ids=["uv", "pip"])
@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_torch_step_from_a_wheelhouse_says_no_index_once(uv, platform):
    sources = torch_source.named_sources("", "", "/usb/wheelhouse")
    installer = install_env.Installer(Path("venv/bin/python"), uv, sources, [])
    plan = torch_source.plan(platform, "2.13.0", wheelhouse="/usb/wheelhouse")
    command = installer.command([*plan.options, plan.requirement])
    assert command.count("--no-index") == 1 and command.count("--find-links") == 1
    assert command[command.index("--find-links") + 1] == "/usb/wheelhouse"
    assert command[-1] == plan.requirement


def test_only_source_options_already_given_are_left_out():
    given = ["--no-index", "--find-links", "/wh"]
    asked = ["--no-index", "--find-links", "/other", "--no-deps", "--find-links", "/wh", "-e", "."]
    assert install_env.without_repeats(given, asked) == ["--find-links", "/other", "--no-deps", "-e", "."]
    assert install_env.without_repeats([], asked) == asked


# ---- a wheelhouse that cannot install the lock is refused in one line


def test_a_wheelhouse_holding_each_pin_that_applies_here_is_taken(lock, wheelhouse):
    assert install_env.wheelhouse_problem(str(wheelhouse), [lock]) is None


def test_an_empty_wheelhouse_is_refused_naming_it_and_how_to_make_one(lock, tmp_path):
    (tmp_path / "empty").mkdir()
    problem = install_env.wheelhouse_problem(str(tmp_path / "empty"), [lock])
    assert "\n" not in problem and str(tmp_path / "empty") in problem and "`make wheelhouse`" in problem
    assert "torch==2.13.0" in problem and "tiny-dep==1.0" in problem and "win-only" not in problem


def test_a_wheelhouse_of_another_version_is_refused(lock, tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    _wheel(folder, "torch", "2.13.0+cpu")
    _wheel(folder, "tiny-dep", "0.9")
    problem = install_env.wheelhouse_problem(str(folder), [lock])
    assert "tiny-dep==1.0" in problem and "torch" not in problem.split("lacks")[1].split(" of ")[0]


def test_a_wheelhouse_that_is_not_a_folder_is_refused(lock, tmp_path):
    (tmp_path / "a-file").write_text("")
    problem = install_env.wheelhouse_problem(str(tmp_path / "a-file"), [lock])
    assert "is not a folder" in problem and "`make wheelhouse`" in problem


def test_setup_stops_before_making_the_venv_in_one_line(lock, tmp_path):
    (tmp_path / "empty").mkdir()
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(tmp_path / "venv"), "--lock", str(lock)]
    command += ["--wheelhouse", str(tmp_path / "empty"), "--installer", "pip"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "`make wheelhouse`" in done.stderr and not (tmp_path / "venv").exists()


# ---- both installers, for real, from the wheelhouse alone


def _uv() -> Path | None:
    """The uv `make setup` installs (.venv-tools beside the venv running the tests), or one on PATH."""
    for tools in (ROOT / ".venv-tools", Path(sys.prefix).parent / ".venv-tools"):
        if (tools / "bin" / "uv").exists():
            return tools / "bin" / "uv"
    found = shutil.which("uv")
    return Path(found) if found else None


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_setup_installs_the_lock_from_the_wheelhouse_alone(installer, lock, wheelhouse, tmp_path):
    tools = tmp_path / "tools"
    if installer == "uv":
        uv = _uv()
        if uv is None:
            pytest.skip("no uv here (`make setup` installs it into .venv-tools)")
        (tools / "bin").mkdir(parents=True)
        (tools / "bin" / "uv").symlink_to(uv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp_path / "cache"))
    env.update(PIP_INDEX_URL="http://127.0.0.1:9/simple")  # any index asked would fail; none is
    venv = tmp_path / "venv"
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(venv), "--lock", str(lock)]
    command += ["--wheelhouse", str(wheelhouse), "--installer", installer, "--tools", str(tools), "--no-project"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert f"with {installer}" in done.stdout
    installed = {p.name for p in venv.glob("lib/python*/site-packages/*.dist-info")}
    assert {"torch-2.13.0+cpu.dist-info", "tiny_dep-1.0.dist-info"} <= installed
