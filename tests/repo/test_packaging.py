"""pyproject's ranges, the top-level pins, the locks and environment.yml agree, both ways.

Only files are read: nothing is installed or downloaded.
"""

import pathlib
import re

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints"
# The two legs: the top-level pins each lock is resolved under.
LEGS = {"pinned.lock.txt": "pinned.txt", "transformers5.lock.txt": "transformers5.txt"}
# What the locks are resolved for (their header says so): markers are judged there.
LOCK_PLATFORM = {
    "python_version": "3.11",
    "python_full_version": "3.11.0",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _requirements(extras):
    """The requirements of the core and the given extras that apply where the locks are resolved."""
    project = _project()
    texts = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    reqs = [Requirement(t) for t in texts]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({**LOCK_PLATFORM, "extra": ""})]


def _pins(lines):
    """name -> version of every `name==version` line (comments and options skipped)."""
    pins = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line and "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _file_pins(name):
    return _pins((CONSTRAINTS / name).read_text().splitlines())


def _lock_extras(lock):
    """The extras the lock's header says it was resolved with (written by `make lock`)."""
    match = re.search(r"with the extras \[([^\]]*)\]", (CONSTRAINTS / lock).read_text())
    assert match, f"{lock} does not say which extras it locks"
    return match.group(1).split()


def _environment_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_lists = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    return _pins(pip_lists[0])


def _public(version):
    """The version without its local label: torch 2.13.0+cpu is release 2.13.0, CPU build."""
    return Version(version).public


@pytest.mark.parametrize("lock", LEGS)
def test_every_requirement_is_locked_inside_its_range(lock):
    pins = _file_pins(lock)
    for req in _requirements(_lock_extras(lock)):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is not in {lock}"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{lock}: {name}=={pins[name]} is outside pyproject's {req.specifier}"
        )


def test_the_reproduction_lock_holds_every_extra():
    assert sorted(_lock_extras("pinned.lock.txt")) == sorted(_project()["optional-dependencies"])


@pytest.mark.parametrize("lock", LEGS)
def test_each_top_level_pin_is_what_its_lock_holds(lock):
    pins = _file_pins(lock)
    for name, version in _file_pins(LEGS[lock]).items():
        if name == "colossalai":  # outside the lock: installed --no-deps by `make colossalai`
            assert name not in pins
            continue
        assert name in pins and _public(pins[name]) == version, (
            f"{LEGS[lock]} pins {name}=={version}, {lock} has {pins.get(name)}"
        )


@pytest.mark.parametrize("lock", LEGS)
def test_the_locks_describe_the_cpu_build_of_torch(lock):
    pins = _file_pins(lock)
    cuda = [n for n in pins if n.startswith("nvidia-") or n == "triton" or n.startswith("cuda-")]
    assert cuda == [], f"{lock} holds CUDA packages: {cuda}"
    assert Version(pins["torch"]).local == "cpu"


def test_environment_pins_equal_the_lock():
    locked = _file_pins("pinned.lock.txt")
    pins = _environment_pins()
    assert pins, "environment.yml pins nothing"
    for name, version in pins.items():
        assert name in locked, f"{name} is pinned in environment.yml but not in the lock"
        # torch by its release alone: which build pip takes depends on the machine (see the file)
        assert version == (_public(locked[name]) if name == "torch" else locked[name]), (
            f"{name}: environment.yml {version}, lock {locked[name]}"
        )


def test_environment_lists_every_top_level_package():
    top_level = {canonicalize_name(r.name) for r in _requirements(_project()["optional-dependencies"])}
    top_level |= set(_file_pins("pinned.txt")) - {"colossalai"}
    missing = sorted(top_level - set(_environment_pins()))
    assert missing == [], f"environment.yml lacks {missing}"


def test_the_reproduction_pins_transformers_as_colossalai_does():
    assert _environment_pins()["transformers"] == "4.51.3"
    assert _file_pins("pinned.lock.txt")["transformers"] == "4.51.3"


def test_the_second_leg_pins_transformers_5_inside_the_declared_range():
    pins = _file_pins("transformers5.lock.txt")
    assert pins["transformers"].startswith("5.")
    (transformers,) = [r for r in _requirements([]) if r.name == "transformers"]
    assert transformers.specifier.contains(pins["transformers"])


def test_the_core_needs_only_torch_transformers_and_matplotlib():
    assert sorted(Requirement(r).name for r in _project()["dependencies"]) == ["matplotlib", "torch", "transformers"]


@pytest.mark.parametrize("lock", LEGS)
def test_the_locks_and_environment_yml_are_for_one_python(lock):
    header = re.search(r"for CPython (\d+\.\d+) on Linux", (CONSTRAINTS / lock).read_text())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    (python,) = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    assert header and header.group(1) == python.split("=")[1] == LOCK_PLATFORM["python_version"]
