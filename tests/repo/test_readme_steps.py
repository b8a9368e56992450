"""The README's commands are the Makefile's: the nbval flags exist once, the doctor comes first,
and the attendee section says what the doctor prints before and after set-up."""

import argparse
import ast
import pathlib
import re

from pp_demo.workshop import doctor, platform_checks

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()


def test_the_readme_runs_the_notebooks_with_the_makefiles_nbval_flags():
    flags = re.search(r"^NBVAL\s*:=\s*(.+)$", MAKEFILE, re.M)[1].strip()
    commands = re.findall(r"pytest (--nbval[^`]*) notebooks", README)
    assert commands and all(command == flags for command in commands)


def test_the_first_steps_run_the_doctor_before_anything_is_installed():
    first_steps = README.split("## Attendees: set up first")[1].split("\n## ")[0]
    assert first_steps.index("make doctor") < first_steps.index("make setup")
    assert "python -m pp_demo doctor" in first_steps  # the conda / Windows path
    assert re.search(r"^doctor:\s*$", MAKEFILE, re.M)


def test_the_conda_path_installs_colossalai_before_the_unit_tests_that_need_it():
    conda = README.split("- conda")[1].split("\n- ")[0]
    assert conda.index("pip install --no-deps colossalai==0.5.0") < conda.index("pytest tests")


def test_no_file_gives_the_wrong_reason_for_installing_colossalai_without_its_dependencies():
    texts = [README, MAKEFILE, (ROOT / "notebooks" / "06_colossalai.ipynb").read_text()]
    assert not any("no CPU build" in text for text in texts)


def _attendee_section():
    return README.split("## Attendees: set up first")[1].split("\n## ")[0]


def _doctor_statuses():
    """Every status the doctor can print, read from its code: the first argument of each
    ``Check(...)`` in doctor.py and the first item of each 3-tuple platform_checks returns."""
    statuses = set()
    for module in (doctor, platform_checks):
        for node in ast.walk(ast.parse(pathlib.Path(module.__file__).read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Check" and node.args:
                first = node.args[0]
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 3:
                first = node.value.elts[0]
            else:
                continue
            if isinstance(first, ast.Name):  # a Check(*tuple) passes no name of its own
                statuses.add(getattr(module, first.id))
    return statuses


def test_the_readme_names_every_status_the_doctor_can_print():
    statuses = _doctor_statuses()
    assert doctor.SKIP in statuses  # the pre-set-up status the README once left out is found
    section = _attendee_section()
    for status in statuses:
        assert re.search(rf"\b{re.escape(status)}\b", section), status


def _doctor_exit(checks, monkeypatch):
    monkeypatch.setattr(doctor, "run_checks", lambda checkout: checks)
    return doctor.run_doctor(argparse.Namespace(checkout=pathlib.Path(".")))


def test_the_readme_says_make_stops_with_the_doctors_exit_status_on_a_fail(monkeypatch, capsys):
    code = _doctor_exit([doctor.Check(doctor.FAIL, "torch", "not installed")], monkeypatch)
    assert code != 0  # make reports a failed recipe as "Error <its exit status>"
    before_setup = _attendee_section().split("make setup  ")[0]
    assert f"Error {code}" in before_setup and "expected" in before_setup


def test_the_readme_keeps_the_optional_packages_warn_lines_after_set_up(monkeypatch, capsys):
    """`make setup` installs neither ColossalAI nor DeepSpeed: their lines stay WARN, never "every line ok"."""
    lock = (ROOT / re.search(r"^LOCK\s*:=\s*(\S+)", MAKEFILE, re.M)[1]).read_text()
    assert not re.search(r"^(colossalai|deepspeed)==", lock, re.M | re.I)  # what `make setup` installs
    monkeypatch.setattr(doctor, "installed", lambda name: False)
    monkeypatch.setattr("pp_demo.deepspeed.missing", lambda: "not installed")
    optional = [doctor.check_colossalai(), doctor.check_deepspeed()]
    assert {check.status for check in optional} == {doctor.WARN}
    after_setup = _attendee_section().split("make setup  ")[1]
    assert "every line ok" not in after_setup
    for check in optional:
        assert re.search(rf"`{check.name}`[^.]*`{check.status}`|`{check.status}`[^.]*`{check.name}`", after_setup)
    _doctor_exit(optional, monkeypatch)
    last = capsys.readouterr().out.splitlines()[-2]  # the verdict line, before the WARN reminder
    assert f"`{last}`" in after_setup
