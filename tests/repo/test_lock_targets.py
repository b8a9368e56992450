"""The locks hold a whole environment for every laptop the workbook supports.

For each target (CPython 3.11-3.13 on Linux x86_64/aarch64, macOS arm64 14+, Windows x86_64) uv
resolves pyproject with every extra under both locks, for that platform, wheels only, against
PyPI: the resolution must need nothing the locks do not pin, at the version they pin. No such
machine is needed: uv resolves for a named platform and Python. Intel macOS is unsupported
(torch 2.13 has no wheel there); the last test keeps that statement true.

Needs uv (``.venv-tools/bin/uv``, which `make setup` installs, or one on PATH) and PyPI.
"""

import os
import pathlib
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow  # it asks the package index, for a minute or two: `make test-slow`

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCKS = [ROOT / "constraints" / "pinned.lock.txt", ROOT / "constraints" / "dev.lock.txt"]
EXTRAS = ["workbook", "onnx", "colossalai", "deepspeed", "dev", "browser"]
PLATFORMS = ["x86_64-manylinux_2_28", "aarch64-manylinux_2_28", "aarch64-apple-darwin", "x86_64-pc-windows-msvc"]
PYTHONS = ["3.11", "3.12", "3.13"]
# On Linux the installed torch is PyTorch's CPU build, whose index cannot be reached from every
# machine: its dependencies are given to uv as that wheel declares them. On macOS and Windows
# PyPI's own torch is the one installed, so uv reads its real metadata.
CPU_TORCH_METADATA = ["--config-file", str(ROOT / "constraints" / "uv-lock.toml")]


def _uv():
    local = ROOT / ".venv-tools" / "bin" / "uv"
    found = str(local) if local.exists() else shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed: `make setup` puts it in .venv-tools")
    return found


def _resolve(platform, python):
    command = [_uv(), "pip", "compile", "-q", "--no-header", "--no-annotate", str(ROOT / "pyproject.toml")]
    command += [f"--extra={extra}" for extra in EXTRAS] + [f"--constraint={lock}" for lock in LOCKS]
    command += ["--python-platform", platform, "--python-version", python, "--only-binary", ":all:"]
    command += CPU_TORCH_METADATA if "linux" in platform else ["--no-config"]
    # torch's macOS wheels are for macOS 14 and later, which is what the workbook supports there
    env = dict(os.environ, MACOSX_DEPLOYMENT_TARGET="14.0")
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def resolved():
    """Every target's resolution, run side by side: each waits on the network, not on the CPU."""
    targets = [(platform, python) for platform in PLATFORMS for python in PYTHONS]
    targets.append(("x86_64-apple-darwin", "3.11"))
    _uv()  # skip before starting anything
    with ThreadPoolExecutor(max_workers=6) as pool:
        return dict(zip(targets, pool.map(lambda target: _resolve(*target), targets), strict=True))


def _pins(text):
    """{name: {versions}} of the ``name==version`` lines, markers and comments set aside."""
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].split(";")[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            pins.setdefault(canonicalize_name(name), set()).add(version.strip())
    return pins


def test_the_pin_reader_keeps_every_version_a_marker_splits():
    text = "a==1 ; python_version < '3.12'  # via b\na==2 ; python_version >= '3.12'\n# c==3\n-c x.txt\n"
    assert _pins(text) == {"a": {"1", "2"}}


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_locks_resolve_whole_for_the_target(resolved, platform, python):
    done = resolved[platform, python]
    assert done.returncode == 0, f"{platform}, CPython {python}: {done.stderr.strip().splitlines()[-3:]}"
    locked = {}
    for lock in LOCKS:
        for name, versions in _pins(lock.read_text()).items():
            locked.setdefault(name, set()).update(versions)
    resolved = _pins(done.stdout)
    assert "torch" in resolved and "transformers" in resolved  # it resolved the project, not nothing
    outside = {name: versions for name, versions in resolved.items() if not versions <= locked.get(name, set())}
    assert outside == {}, f"{platform}, CPython {python} needs what the locks do not pin: {outside}"


def test_intel_macos_stays_unsupported_because_torch_has_no_wheel_there(resolved):
    done = resolved["x86_64-apple-darwin", "3.11"]
    assert done.returncode != 0
    assert "torch" in done.stderr and "no wheels with a matching platform tag" in done.stderr
