"""The README's commands are the Makefile's: the nbval flags exist once, the doctor comes first."""

import pathlib
import re

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
