"""What this machine is, for doctor: is the platform supported, which torch build, is a GPU there.

The workbook is locked for CPython 3.11-3.13 on Linux x86_64/aarch64 (glibc 2.28+), macOS arm64
(14+) and Windows x86_64 (docs/install.md). torch 2.13.0 has wheels for exactly those; Intel
macOS has none (nor has bitsandbytes, which ColossalAI's import chain needs). Each function
returns ``(status, name, detail)`` in doctor's words; standard library only, and torch is never
imported: its build is read from its package metadata, so a broken torch cannot hang doctor.
The room around it too: torchrun's variables left in the shell, a checkout or a home folder that
takes no files (each named with the fix that works, since `make setup` fixes none of them), and
the folder of this environment's own where Lab's kernel spec and matplotlib's cache live.
"""

from __future__ import annotations  # the doctor runs on an old Python too, to say which to install

import importlib.metadata
import importlib.util
import os
import platform as platform_module
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The status words of every check of the room (this module's, the doctor's, gpu-check's).
OK, WARN, FAIL, SKIP = "ok", "WARN", "FAIL", "skip"
TESTED_TORCH = ((2, 11), (2, 15))
"""The oldest and the newest torch release (major, minor) that CI tests the workbook on: the lock's
torch, and these two ends (the Makefile's ``test-torch-range``, ``pyproject.toml``'s requirement,
the README). Below 2.11 two-rank training fails; each end was measured (docs/gpu.md)."""


def torch_in_tested_range(version: str) -> bool:
    """Whether ``version`` (``2.11.0+cu130``, say) is a release of the tested range."""
    release = tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:2])
    return TESTED_TORCH[0] <= release <= TESTED_TORCH[1]


def tested_torch_range() -> str:
    """``2.11-2.15``, as the doctor and the README write it."""
    return "-".join(".".join(map(str, end)) for end in TESTED_TORCH)


GPU_FIX = "rm -f .venv/.installed && make setup TORCH=cu128"
CPU_FIX = "rm -rf .venv && make setup"
# A torch kept by `--keep-torch` (docs/gpu.md) is the machine's own: setup's fixes would replace it.
KEPT_FIX = "it is the torch this environment kept (--keep-torch): install another build where it comes from"
SITE = "`make site` shows every notebook with its stored outputs, read-only"


def platform_support(
    system: str = sys.platform,
    machine: str = platform_module.machine(),
    mac_version: str = platform_module.mac_ver()[0],
    libc: tuple[str, str] = platform_module.libc_ver(),
) -> tuple[str, str, str]:
    """Whether the lock and torch's wheels cover this operating system and processor."""
    name, arch = "platform", machine.lower()
    if system == "linux" and arch in ("x86_64", "aarch64", "arm64"):
        glibc = libc[1] if libc[0] == "glibc" else ""
        if glibc and tuple(int(p) for p in glibc.split(".")[:2]) < (2, 28):
            return FAIL, name, f"Linux {arch} with glibc {glibc}: torch's wheels need glibc 2.28 or newer; {SITE}"
        return OK, name, f"Linux {arch}: supported"
    if system == "darwin" and arch == "arm64":
        if mac_version and int(mac_version.split(".")[0]) < 14:
            return FAIL, name, f"macOS {mac_version}: torch 2.13's wheels need macOS 14 or newer; {SITE}"
        return OK, name, f"macOS {mac_version or '?'} on Apple silicon: supported"
    if system == "darwin":
        why = "torch 2.13 has no wheel for it, and ColossalAI is unavailable there (bitsandbytes has none either)"
        return FAIL, name, f"Intel macOS is not supported: {why}; {SITE}"
    if system == "win32" and arch in ("amd64", "x86_64"):
        return OK, name, "Windows x86_64: supported"
    return FAIL, name, f"{system} {machine} is not supported (torch 2.13 has no wheel for it); {SITE}"


def package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def env_with_path(folder: Path) -> dict[str, str]:
    """This environment with ``folder`` first on PYTHONPATH: a child process imports the pp_demo in it."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))


def visible_gpu() -> str | None:
    """The first GPU ``nvidia-smi -L`` lists, or None where there is no NVIDIA driver."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return None
    try:
        done = subprocess.run([command, "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("GPU ")]
    return re.sub(r"\s*\(UUID:.*\)$", "", lines[0]) if done.returncode == 0 and lines else None


def torch_build(version: str, requires: list[str], system: str | None = None) -> str:
    """``CPU``, ``CUDA 12.8`` or ``MPS`` (with CPU): from the version's label or its requirements."""
    label = version.partition("+")[2]
    if label.startswith("cu"):
        digits = label[2:]
        return f"CUDA {digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else "CUDA"
    runtime = [r for r in requires if r.startswith("nvidia-cuda-runtime") and "extra ==" not in r]
    if runtime:  # PyPI's Linux torch: the CUDA build, its CUDA version in the runtime's pin
        match = re.search(r"==\s*(\d+)\.(\d+)", runtime[0])
        return f"CUDA {match[1]}.{match[2]}" if match else "CUDA"
    if any(r.startswith("nvidia-") and "extra ==" not in r for r in requires):
        return "CUDA"
    return "MPS (and CPU)" if (system or sys.platform) == "darwin" else "CPU"


def torch_kept(location: Path, prefix: Path = Path(sys.prefix)) -> bool:
    """Whether the torch installed at ``location`` (its site-packages) was kept rather than put in
    by ``make setup``: it lies outside this environment, or the environment holds the lock that
    ``--keep-torch`` wrote around it."""
    inside = prefix.resolve() in (location.resolve(), *location.resolve().parents)
    return not inside or any(prefix.glob("keep-torch*.lock.txt"))


def torch_build_check(
    version: str, requires: list[str], gpu: str | None, system: str | None = None, kept: bool = False
) -> tuple[str, str, str]:
    """The torch build against the machine: a GPU left unused, or CUDA wheels with no GPU, is a WARN.
    A ``kept`` torch is the machine's own: the fix named is never one that replaces it."""
    system = system or sys.platform
    gpu_fix, cpu_fix = (KEPT_FIX, KEPT_FIX) if kept else (f"`{GPU_FIX}`", f"`{CPU_FIX}`")
    name, build = "torch build", torch_build(version, requires, system)
    if system == "darwin":
        why = "the workbook runs on the CPU on macOS (MPS is not a pipeline backend here)"
        return WARN, name, f"{version}, {build}: {why}"
    if build == "CPU" and gpu:
        return WARN, name, f"{version}, CPU build, but a GPU is visible ({gpu}): for the GPU runs, {gpu_fix}"
    if build.startswith("CUDA") and not gpu:
        return WARN, name, f"{version}, {build} build, but no GPU is visible: gigabytes unused; {cpu_fix}"
    return OK, name, f"{version}, {build} build" + (f", {gpu}" if gpu else "")


def torchrun_env_check(environ: dict[str, str] | None = None) -> tuple[str, str, str]:
    """torchrun's variables left in the shell (``RANK=0 WORLD_SIZE=2``): every run then takes
    itself for a torchrun rank, and ``reproduce`` refuses, so the doctor warns with its line."""
    from pp_demo.errors import BadInput
    from pp_demo.ranks.torchrun_env import TORCHRUN_VARS, check_torchrun_env

    environ = dict(os.environ) if environ is None else environ
    name, present = "torchrun variables", [var for var in TORCHRUN_VARS if environ.get(var)]
    if not present:
        return OK, name, "none set in this shell"
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(environ)
        check_torchrun_env()
        said = "the runs will take themselves for torchrun's ranks and wait for the others"
    except BadInput as error:
        said = f"the runs refuse them: {error}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return WARN, name, f"{', '.join(present)} set in this shell: {said}; `unset {' '.join(present)}` outside torchrun"


def writable_check(notebooks: Path | None) -> tuple[str, str, str]:
    """Whether the notebooks can be saved: a read-only checkout runs them, but Lab cannot save them."""
    name = "notebooks writable"
    if notebooks is None:
        return SKIP, name, "no notebooks/ folder here"
    try:
        with tempfile.NamedTemporaryFile(dir=notebooks, prefix=".pp_demo_doctor_"):
            pass
    except OSError as error:
        why = error.strerror or type(error).__name__
        fix = "copy the checkout to a folder you can write (`git clone` it again there), and run from that copy"
        return WARN, name, f"cannot write in {notebooks} ({why}): Lab cannot save a notebook; {fix}"
    return OK, name, f"{notebooks} is writable"


def home_check(home: str | None = None) -> tuple[str, str, str]:
    """Whether the home folder takes files: IPython keeps its profile there and Jupyter its runtime
    files (a kernel does not start without them); ``make setup`` cannot fix it, so the line says what does."""
    home = home if home is not None else os.path.expanduser("~")
    name = "home folder"
    try:
        with tempfile.NamedTemporaryFile(dir=home, prefix=".pp_demo_doctor_"):
            pass
    except OSError as error:
        why = error.strerror or type(error).__name__
        return (
            FAIL,
            name,
            f"HOME={home} cannot be written ({why}), where IPython and Jupyter keep their files: {HOME_FIX}",
        )
    return OK, name, f"{home} is writable"


HOME_FIX = "set HOME to a folder you can write (export HOME=...), or IPYTHONDIR and JUPYTER_RUNTIME_DIR to one"


def own_folder(name: str) -> Path:
    """``name`` under ``share/pp_demo`` of this environment (the venv ``make lab`` runs), else under
    the user's cache: one fixed place per environment, rewritten by each run, never a new
    temporary folder left behind. Created; ``OSError`` where neither can be written."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    error: OSError | None = None
    for base in (Path(sys.prefix) / "share" / "pp_demo", Path(home) / "pp_demo"):
        try:
            (base / name).mkdir(parents=True, exist_ok=True)
            probe = base / name / f".probe-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
            return base / name
        except OSError as failed:
            error = failed
    assert error is not None
    raise error


def private_mplconfig() -> str | None:
    """matplotlib's config and cache folder for this environment alone (``MPLCONFIGDIR``): its
    font list is built by this matplotlib, so a per-user ``~/.cache/matplotlib`` that another
    program rewrote without matplotlib's own fonts cannot fill a notebook's stderr with findfont
    warnings. None where no folder can be written (matplotlib then picks its own)."""
    try:
        return str(own_folder("matplotlib"))
    except OSError:
        return None
