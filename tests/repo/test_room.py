"""A room where every laptop follows: no attendee needs ColossalAI, and each platform has its commands.

ColossalAI 0.5.0 cannot be installed on native Windows, so `make lab` (the attendee's path) must not
install it, no page may give Windows a ColossalAI line, and the facilitator's checklist gives the
Windows commands for the doctor and Lab and says where a Mac gets a Python 3.11+.
"""

import hashlib
import json
import pathlib
import re
import tarfile

import pytest

from pp_demo.instruments.pull_request import sdists
from pp_demo.workshop import doctor, lab
from tools import episodes

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8") + (ROOT / "packaging.mk").read_text(encoding="utf-8")
INSTALL = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
CHECKLIST = GUIDE.split("## Set-up checklist for attendees")[1].split("\n## ")[0]
IMPORTING = re.compile(r"^\s*(import colossalai|from colossalai)|colossalai_forwards?\(", flags=re.M)
PAGES = ["README.md", "docs/install.md", "docs/troubleshooting.md", "docs/facilitator.md", "environment.yml"]


def _prerequisites(target):
    """Every target ``target`` depends on, through the Makefile's rules (variables expanded by hand)."""
    rules = {}
    for name, deps in re.findall(r"^([^\s:#=]+):(?!=)([^\n]*)$", MAKEFILE, flags=re.M):
        rules.setdefault(name, []).extend(deps.split())
    expand = {"$(VENV)": ".venv", "$(LOCK)": "constraints/pinned.lock.txt"}
    seen, todo = set(), [target]
    while todo:
        for dep in rules.get(todo.pop(), []):
            for short, long in expand.items():
                dep = dep.replace(short, long)
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_make_lab_does_not_install_colossalai_and_make_test_still_does():
    assert "setup" in _prerequisites("lab")
    assert not {"colossalai", ".venv/.colossalai"} & _prerequisites("lab")
    for target in ("test", "test-notebooks", "test-unit"):  # CI runs notebook 06 and tests/colossalai/
        assert "colossalai" in _prerequisites(target), target


def test_only_notebook_06_imports_colossalai():
    found = []
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        if any(IMPORTING.search(source) for source in code):
            found.append(path.name[:2])
    assert found == ["06"]


def test_a_notebook_that_imports_colossalai_says_in_its_header_how_to_follow_without_it():
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        header = "".join(next(c["source"] for c in cells if c.get("id") == "episode-header"))
        imports = any(IMPORTING.search("".join(c["source"])) for c in cells if c["cell_type"] == "code")
        says = all(way in header for way in ("stored outputs", "`make site`", "instructor's demo"))
        assert says == imports, path.name
        assert (episodes.WITHOUT_COLOSSALAI in header) == imports


def test_no_page_gives_windows_a_colossalai_install_line():
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for sentence in re.split(r"(?<=[.;])\s+|\n", text):  # one instruction per sentence
            installs = re.search(r"pip install[^`]*colossalai|make colossalai", sentence)
            assert not (installs and re.search(r"Scripts|Windows:", sentence)), f"{page}: {sentence.strip()}"


def test_the_install_page_says_why_windows_cannot_install_colossalai_and_what_to_do():
    assert "ColossalAI 0.5.0 cannot be installed on native Windows" in INSTALL
    assert "WSL2" in INSTALL and "stored outputs" in INSTALL
    assert "ColossalAI is not needed to follow the workshop" in INSTALL


def test_the_windows_claim_is_what_the_cached_sdist_s_setup_py_says():
    sdist = sdists.default_cache() / "colossalai-0.5.0.tar.gz"
    if not sdist.exists():
        pytest.skip("the colossalai-0.5.0 sdist is not cached here (make verify-pr fetches it)")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert f"sha256 `{digest}`" in INSTALL
    with tarfile.open(sdist) as archive:
        setup = archive.extractfile("colossalai-0.5.0/setup.py").read().decode().splitlines()
    cited = re.search(r"lines (\d+)-(\d+) of `setup.py`", INSTALL)
    first, last = int(cited[1]), int(cited[2])
    assert setup[first - 1].strip() == 'if sys.platform == "win32":'
    message = re.search(r'raise RuntimeError\("(.+?)"\)', setup[last - 1])[1]
    assert message.split() == re.search(r'`RuntimeError\("(.+?)"\)`', INSTALL, flags=re.S)[1].split()


def test_the_checklist_gives_windows_its_doctor_and_lab_commands():
    command, _, _ = lab.lab_command([])
    assert command[1:3] == ["-m", "jupyterlab"]  # what `make lab` runs, so Windows runs the same module
    assert lab.OPEN_AT in command  # Lab on the checkout, opening at the working copy: Windows runs make lab's module
    for line in (r"`.venv\Scripts\python -m pp_demo doctor`", r"`.venv\Scripts\python -m pp_demo.workshop.lab`"):
        assert line in CHECKLIST and line in INSTALL


def test_the_checklist_and_the_doctor_tell_a_mac_where_python_3_11_comes_from():
    hint = doctor.NEWER_PYTHON["darwin"]
    for part in ("brew install python@3.12", "PYTHON=python3.12", "python.org"):
        assert part in hint and part in CHECKLIST, part


def test_homework_needs_no_colossalai_and_a_mixed_room_has_its_three_ways():
    homework = CHECKLIST.split("Homework")[1].split("\n\n")[0]
    assert "make colossalai" not in homework and "not* homework" in homework
    for way in ("read-only site", "shared Linux machine", "one wheelhouse per platform and Python"):
        assert way in CHECKLIST, way
    for way in ("**the read-only site**", "**a shared machine**", "**one wheelhouse per platform and Python"):
        assert way in INSTALL, way
