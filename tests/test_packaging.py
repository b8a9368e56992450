"""The pinned reproduction environment agrees with the package's declared ranges."""

import pathlib
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import yaml
from packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return {r.name.lower(): r for r in reqs}


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line and "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def _environment_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_lists = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    return _pins(pip_lists[0])


def test_every_pinned_package_is_a_dependency_and_satisfies_its_range():
    declared = _pyproject_requirements()
    pins = _environment_pins()
    assert pins, "environment.yml pins nothing"
    for name, version in pins.items():
        assert name in declared, f"{name} is pinned in environment.yml but not declared in pyproject"
        assert declared[name].specifier.contains(version, prereleases=True), \
            f"{name}=={version} is outside pyproject's {declared[name].specifier}"


def test_environment_and_constraints_pin_the_same_versions():
    constraints = _pins((ROOT / "constraints" / "pinned.txt").read_text().splitlines())
    for name, version in _environment_pins().items():
        assert constraints.get(name) == version, f"{name}: environment.yml {version}, constraints {constraints.get(name)}"


def test_the_reproduction_pins_transformers_as_colossalai_does():
    assert _environment_pins()["transformers"] == "4.51.3"


def test_the_second_leg_pins_transformers_5_inside_the_declared_range():
    pins = _pins((ROOT / "constraints" / "transformers5.txt").read_text().splitlines())
    assert pins["transformers"].startswith("5.")
    assert _pyproject_requirements()["transformers"].specifier.contains(pins["transformers"])


def test_the_core_needs_only_torch_transformers_and_matplotlib():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(Requirement(r).name for r in project["dependencies"]) == ["matplotlib", "torch", "transformers"]
