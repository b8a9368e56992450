"""Where `make setup` takes torch from, decided before anything is installed.

The lock pins one torch release (``torch==2.13.0``) for every platform, but not one file:

- On Linux the wanted file is PyTorch's CPU build, ``2.13.0+cpu``. PyPI does not carry it; PyPI's
  Linux torch is the CUDA build, which pulls some twenty nvidia-* wheels (gigabytes). It is never
  taken in its place: the requirement names the ``+cpu`` label, so no index can substitute it.
  The build comes from pip's own sources if they offer it (a configured index or folder), else
  from PyTorch's CPU index, probed once with a short timeout. If neither has it, setup stops with
  one line that names the three ways out.
- On macOS and Windows PyPI's torch is the CPU build (with MPS on Apple silicon): taken from there.
- ``TORCH=cu128`` asks for a CUDA build from PyTorch's CUDA index, on a GPU box: one of
  ``CUDA_BUILDS``, the builds PyTorch publishes for the locked release; another ``cuNNN`` is
  refused in one line naming them, unless its index is named (``TORCH_INDEX=url``).

Standard library only: this runs before the venv has anything in it, with any Python.
"""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PYTORCH_WHEELS = "https://download.pytorch.org/whl"
# The builds of the locked torch on PyTorch's index (download.pytorch.org/whl/torch/): the CPU
# build and these CUDA builds. A newer one, published later, is taken with TORCH_INDEX=its index.
CUDA_BUILDS = ("cu126", "cu128", "cu130")
TORCH_BUILDS = ("cpu", *CUDA_BUILDS)
PROBE_TIMEOUT_S = 10
FIX = (
    "give a source: make setup TORCH_INDEX=<an index with PyTorch's CPU wheels> or "
    "TORCH_FIND_LINKS=<a folder holding the wheel>, or on a GPU box make setup TORCH=cu128"
)


class NoTorchSource(Exception):
    """No source offers the torch build this platform needs; the message is the one line shown."""


@dataclass(frozen=True)
class TorchPlan:
    """The requirement to install (with its build label) and the extra source options for it."""

    requirement: str
    options: list[str] = field(default_factory=list)
    source: str = "pip's own sources"


def locked_torch(lock: Path) -> str:
    """The torch release the lock pins, without a build label: ``2.13.0``."""
    match = re.search(r"^torch==([0-9][^\s;#+]*)", lock.read_text(encoding="utf-8"), flags=re.M)
    if not match:
        raise NoTorchSource(f"{lock} pins no torch==<version> line")
    return match.group(1)


def named_sources(torch_index: str, find_links: str, wheelhouse: str) -> list[str]:
    """The options for the sources the user named (WHEELHOUSE alone excludes every index)."""
    if wheelhouse:
        return ["--no-index", "--find-links", wheelhouse]
    options = ["--extra-index-url", torch_index] if torch_index else []
    return options + (["--find-links", find_links] if find_links else [])


def plan(
    platform: str,
    version: str,
    flavour: str = "cpu",
    torch_index: str = "",
    find_links: str = "",
    wheelhouse: str = "",
    pip_offers: Callable[[str], bool] = lambda requirement: False,
    index_offers: Callable[[str, str], bool] = lambda url, requirement: False,
    pytorch_wheels: str = PYTORCH_WHEELS,
) -> TorchPlan:
    """Which torch to install from where, for ``platform`` (``sys.platform``); see the module doc.

    ``pip_offers(requirement)`` says whether pip's configured sources have that exact file;
    ``index_offers(url, requirement)`` whether an index does. Each is asked at most once.
    """
    given = named_sources(torch_index, find_links, wheelhouse)
    named = wheelhouse or torch_index or find_links
    if flavour != "cpu":
        if not re.fullmatch(r"cu\d{3}", flavour) or (flavour not in CUDA_BUILDS and not torch_index):
            raise NoTorchSource(
                f"TORCH={flavour} is not a build PyTorch publishes for torch {version}: use TORCH=cpu (the default) "
                f"or one of its CUDA builds, {', '.join(CUDA_BUILDS)} (another one: name its index, TORCH_INDEX=url)"
            )
        if platform == "darwin":
            raise NoTorchSource("macOS has no CUDA build of torch: leave TORCH unset (the CPU/MPS build)")
        index = f"{pytorch_wheels}/{flavour}"
        options = given if named else ["--extra-index-url", index]
        return TorchPlan(f"torch=={version}+{flavour}", options, named or index)
    if platform != "linux":  # PyPI's macOS and Windows wheels are the CPU (and MPS) build
        return TorchPlan(f"torch=={version}", given, named or "PyPI (its CPU build on this platform)")
    requirement = f"torch=={version}+cpu"
    if named:
        return TorchPlan(requirement, given, named)
    if pip_offers(requirement):
        return TorchPlan(requirement)
    cpu_index = f"{pytorch_wheels}/cpu"
    if index_offers(cpu_index, requirement):
        return TorchPlan(requirement, ["--extra-index-url", cpu_index], cpu_index)
    raise NoTorchSource(
        f"no source offers {requirement}, the CPU build (PyPI has only the multi-GB CUDA build on Linux, "
        f"never taken in its place): pip's sources lack it and {cpu_index} did not offer it "
        f"within {PROBE_TIMEOUT_S} s; {FIX}"
    )


def pip_offers(python: str, requirement: str) -> bool:
    """Whether pip's configured sources (files, PIP_* variables) have ``requirement``; one try each."""
    command = [python, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "-q"]
    command += ["--retries", "0", "--timeout", str(PROBE_TIMEOUT_S), requirement]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=4 * PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def index_offers(url: str, requirement: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a simple index's page for torch lists the file ``requirement`` pins (one request)."""
    filename = requirement.replace("==", "-")  # torch==2.13.0+cpu -> torch-2.13.0+cpu
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/torch/", timeout=timeout) as page:
            text = page.read().decode("utf-8", errors="replace")
    except (OSError, urllib.error.URLError, ValueError):
        return False
    return filename in text or filename.replace("+", "%2B") in text


def pip_configuration(python: str) -> dict[str, str]:
    """pip's effective settings (``pip config list``): environment variables over files."""
    try:
        done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    settings: dict[str, str] = {}
    from_env: dict[str, str] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"([^.=]*)\.([\w-]+)='(.*)'$", line.strip())
        if match:
            (from_env if match.group(1) == ":env:" else settings)[match.group(2)] = match.group(3)
    return {**settings, **from_env}


def uv_sources(settings: dict[str, str]) -> list[str]:
    """The index and folder options that give uv the sources pip would use (uv reads no pip config)."""
    options = ["--index-url", settings["index-url"]] if settings.get("index-url") else []
    extra = settings.get("extra-index-url", "").split()
    for url in extra:
        options += ["--extra-index-url", url]
    for folder in settings.get("find-links", "").split():
        options += ["--find-links", folder]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        options.append("--no-index")
    return options


def main() -> int:
    """``python tools/torch_source.py LOCK``: print the plan for this machine (a look, no install)."""
    try:
        version = locked_torch(Path(sys.argv[1]))
        chosen = plan(
            sys.platform,
            version,
            pip_offers=lambda r: pip_offers(sys.executable, r),
            index_offers=index_offers,
        )
    except NoTorchSource as error:
        print(f"torch: {error}", file=sys.stderr)
        return 1
    print(f"{chosen.requirement} from {chosen.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
