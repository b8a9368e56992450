"""pyproject's ranges, the top-level pins, the locks and environment.yml agree, both ways.

Only files are read: nothing is installed or downloaded.
"""

import pathlib
import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints"
# The two legs: the top-level pins each lock is resolved under.
LEGS = {"pinned.lock.txt": "pinned.txt", "transformers5.lock.txt": "transformers5.txt"}
# What contributors add (`make setup-dev`), resolved under the attendee lock.
DEV = "dev.lock.txt"
ATTENDEE_EXTRAS = ["workbook", "onnx", "colossalai", "deepspeed"]
# Installed --no-deps beside the lock, by `make colossalai` and `make deepspeed`: pinned, never locked.
OUTSIDE_THE_LOCK = {"colossalai", "deepspeed"}
# The platform CI runs on: the transformers 5 lock is resolved for it alone; the universal locks'
# markers are judged there too.
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
    """name -> version of every `name==version` line (comments, markers and options skipped)."""
    pins = {}
    for line in lines:
        line = line.split("#")[0].split(";")[0].strip()
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


@pytest.mark.parametrize("lock", [*LEGS, DEV])
def test_every_requirement_is_locked_inside_its_range(lock):
    pins = _file_pins(lock)
    for req in _requirements(_lock_extras(lock)):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is not in {lock}"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{lock}: {name}=={pins[name]} is outside pyproject's {req.specifier}"
        )


def test_the_attendee_and_dev_locks_hold_every_extra_between_them():
    assert _lock_extras("pinned.lock.txt") == ATTENDEE_EXTRAS
    assert sorted(_lock_extras("pinned.lock.txt") + _lock_extras(DEV)) == sorted(_project()["optional-dependencies"])


def test_the_dev_lock_agrees_with_the_attendee_lock_where_both_pin():
    attendee, dev = _file_pins("pinned.lock.txt"), _file_pins(DEV)
    differ = {name: (attendee[name], dev[name]) for name in attendee.keys() & dev.keys() if attendee[name] != dev[name]}
    assert differ == {}
    assert {"ruff", "mypy", "pre-commit", "playwright"} <= dev.keys() and not {"ruff", "playwright"} & attendee.keys()


@pytest.mark.parametrize("lock", LEGS)
def test_each_top_level_pin_is_what_its_lock_holds(lock):
    pins = _file_pins(lock)
    for name, version in _file_pins(LEGS[lock]).items():
        if name in OUTSIDE_THE_LOCK:
            assert name not in pins
            continue
        assert name in pins and _public(pins[name]) == version, (
            f"{LEGS[lock]} pins {name}=={version}, {lock} has {pins.get(name)}"
        )


@pytest.mark.parametrize("lock", [*LEGS, DEV])
def test_the_locks_describe_the_cpu_build_of_torch(lock):
    pins = _file_pins(lock)
    cuda = [n for n in pins if n.startswith("nvidia-") or n == "triton" or n.startswith("cuda-")]
    assert cuda == [], f"{lock} holds CUDA packages: {cuda}"


@pytest.mark.parametrize("lock", ["pinned.lock.txt", DEV])
def test_the_universal_locks_pin_torch_by_its_release_which_setup_picks_the_build_of(lock):
    # the build label differs per platform (+cpu on Linux, none on macOS/Windows): tools/torch_source.py
    torch = _file_pins(lock)["torch"]
    assert Version(torch).local is None and torch == _file_pins("pinned.txt")["torch"]


def test_the_linux_only_lock_pins_the_cpu_build():
    assert Version(_file_pins("transformers5.lock.txt")["torch"]).local == "cpu"


def test_the_torch_dependencies_the_locks_assume_are_a_cpu_build_s():
    settings = tomllib.loads((CONSTRAINTS / "uv-lock.toml").read_text())
    (torch,) = [m for m in settings["dependency-metadata"] if m["name"] == "torch"]
    assert torch["version"] == _file_pins("pinned.txt")["torch"]
    names = {canonicalize_name(Requirement(r).name) for r in torch["requires-dist"]}
    assert names and not any(n.startswith(("nvidia-", "cuda-")) or n == "triton" for n in names)


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


def test_environment_lists_every_top_level_package_an_attendee_needs():
    top_level = {canonicalize_name(r.name) for r in _requirements(ATTENDEE_EXTRAS)}
    top_level |= set(_file_pins("pinned.txt")) - OUTSIDE_THE_LOCK
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


def _python_range(text):
    """(lowest, highest) minor version a sentence like "CPython 3.11-3.13" or "CPython 3.11" names."""
    match = re.search(r"CPython (3\.\d+)(?:-(3\.\d+))? on Linux", text)
    assert match, "no 'CPython 3.x[-3.y] on Linux' in the lock header"
    return match.group(1), match.group(2) or match.group(1)


def test_one_python_range_in_the_lock_pyproject_environment_yml_doctor_and_setup():
    """Python 3.10 is not supported (contourpy 1.3.3 and torch's lock need 3.11): all say 3.11-3.13."""
    from pp_demo.workshop import doctor

    lowest, highest = _python_range((CONSTRAINTS / "pinned.lock.txt").read_text())
    assert (lowest, highest) == ("3.11", "3.13")
    assert _project()["requires-python"] == f">={lowest}"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    (python,) = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    assert lowest <= python.split("=")[1] <= highest
    assert doctor.check_python((3, 10, 14)).status == doctor.FAIL
    assert doctor.check_python((3, 11, 0)).status == doctor.check_python((3, 13, 9)).status == doctor.OK
    assert doctor.check_python((3, 14, 0)).status == doctor.WARN


def test_the_linux_lock_and_environment_yml_are_for_one_python():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    (python,) = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    lock5 = _python_range((CONSTRAINTS / "transformers5.lock.txt").read_text())
    assert lock5 == (python.split("=")[1],) * 2 == (LOCK_PLATFORM["python_version"],) * 2


def test_one_torch_range_in_pyproject_the_ci_legs_the_doctor_and_the_readme():
    """CI tests torch 2.11 and 2.15 besides the lock's 2.13: pyproject admits exactly those
    minor releases, the Makefile's legs are their ends, the doctor and the README say the same."""
    from pp_demo.workshop import platform_checks

    makefile = (ROOT / "Makefile").read_text()
    lowest = re.search(r"^TORCH_LOWEST := (\S+)$", makefile, re.M)[1]
    newest = re.search(r"^TORCH_NEWEST := (\S+)$", makefile, re.M)[1]
    assert "make test-torch-range" in (ROOT / ".ci" / "run").read_text()
    (torch,) = [Requirement(r) for r in _project()["dependencies"] if r.startswith("torch")]
    for minor in range(0, 20):
        admitted = Version(f"2.{minor}.0") in torch.specifier
        assert admitted == (Version(lowest).minor <= minor <= Version(newest).minor), minor
    assert Version("3.0.0") not in torch.specifier
    assert (Version(lowest).release[:2], Version(newest).release[:2]) == platform_checks.TESTED_TORCH
    pinned = Version(_file_pins("pinned.lock.txt")["torch"])
    assert Version(lowest) <= pinned <= Version(newest)
    shown = f"{Version(lowest).major}.{Version(lowest).minor} to {Version(newest).major}.{Version(newest).minor}"
    assert f"**torch: tested on {shown}.**" in (ROOT / "README.md").read_text()
