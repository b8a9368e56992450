"""What an attendee runs before the workshop: set-up first, no verdict, lines that work where
they are.

Notebook 01 lets attendees find which pooling rule goes wrong; the README's attendee section and
the set-up steps it, docs/install.md and the guide's checklist give (install, then the doctor)
must not tell them first. Those lines name exactly the Pythons the package supports, and offer
ColossalAI only where it installs: never on native Windows, whose win32 its `setup.py` refuses.
"""

import pathlib
import re
import tomllib

from helpers import verdicts

from pp_demo.core import RULES
from pp_demo.workshop.lab import OPEN_AT
from tools import facilitator, install_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
INSTALL = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
CHECKLIST = GUIDE.split("## Set-up checklist for attendees")[1].split("\n## ")[0]
ATTENDEES = "## Attendees: set up first"
PAGES = ["README.md", "docs/install.md", "docs/facilitator.md", "environment.yml", "CONTRIBUTING.md", "Makefile"]


def _attendee_section():
    return README.split(ATTENDEES)[1].split("\n## ")[0]


def _commands(text):
    """The shell commands of ``text``: its ```bash blocks' lines and its `code` spans."""
    blocks = [
        line.split("#")[0].strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S) for line in b.splitlines()
    ]
    return [c for c in blocks + re.findall(r"`([^`\n]+)`", text) if c]


def test_the_readme_puts_the_attendees_set_up_before_anything_that_names_the_bug():
    sections = re.findall(r"^## (.+)$", README, flags=re.M)
    assert sections[0] == ATTENDEES.removeprefix("## ")  # the first section a reader meets
    up_to_the_end_of_set_up = README.split(ATTENDEES)[0] + _attendee_section()
    assert verdicts(up_to_the_end_of_set_up) == []
    assert verdicts(README) != []  # the bug is named, after it (the check is not blind)
    steps = _commands(_attendee_section())
    assert steps.index("make doctor") < steps.index("make setup") < steps.index("make lab")


def test_the_set_up_steps_never_run_the_reproduction_whose_last_lines_are_the_verdict():
    for where, text in [
        ("README", _attendee_section()),
        ("checklist", CHECKLIST),
        ("email", "\n".join(facilitator.SETUP_EMAIL)),
    ]:
        commands = _commands(text)
        assert commands, where
        assert [c for c in commands if re.search(r"\breproduce\b", c)] == [], where
        assert verdicts(text) == [], where


def _recipe(target):
    match = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)*)", MAKEFILE, flags=re.M)
    assert match, target
    return match[0]


def test_the_make_targets_of_the_set_up_run_no_reproduction():
    for target in ("setup", "doctor", "lab"):
        recipe = _recipe(target)
        assert "reproduce" not in recipe and "$(BIN)/python -m pp_demo reproduce" not in recipe, recipe


GPU_PAGE = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
AFTER_THE_WORKSHOP = "\n## After the workshop\n"


def test_the_gpu_page_tells_no_verdict_before_its_after_the_workshop_part():
    """The README sends attendees on a GPU box to docs/gpu.md: what they read there before the room
    runs no reproduction and names no rule; what follows the marked part may (and does)."""
    assert "docs/gpu.md" in _attendee_section()
    before, after = GPU_PAGE.split(AFTER_THE_WORKSHOP)  # one marker, no more
    assert "(#after-the-workshop)" in before  # the attendee is told where to stop
    assert [c for c in _commands(before) if re.search(r"\breproduce\b", c)] == []
    assert verdicts(before) == []
    named = [rule for rule in RULES if re.search(rf"`{rule}`|\b{rule.replace('_', '[-_ ]')} rule\b", before)]
    assert named == []
    # not blind: the part after the marker runs the reproduction and gives the numbers
    assert [c for c in _commands(after) if re.search(r"\bpp_demo reproduce\b", c)] and verdicts(after)


def test_the_gpu_pages_keep_torch_recipe_opens_lab_without_make_setup():
    """`make lab` runs `make setup` first, which installs the lock's torch over the kept one."""
    assert re.match(r"lab: setup\b", _recipe("lab"))
    module = re.search(r"-m (\S+)", _recipe("lab"))[1]
    recipe = GPU_PAGE.split("## Keep the torch your machine has")[1].split("\n## ")[0]
    (block,) = re.findall(r"```bash\n(.*?)```", recipe, re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert f".venv/bin/python -m {module}" in commands and "make lab" not in commands
    assert commands.index(".venv/bin/python -m pp_demo doctor") < commands.index(f".venv/bin/python -m {module}")


def _supported():
    classifiers = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"]
    return [c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]


def test_pyproject_names_the_pythons_the_locks_are_resolved_for():
    supported = _supported()
    assert supported == [f"{major}.{minor}" for major, minor in install_env.SUPPORTED_PYTHONS]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={supported[0]}"


def test_every_page_names_exactly_the_supported_pythons():
    supported = _supported()
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for listed in re.findall(r"Python (3\.\d+(?:, 3\.\d+)* or 3\.\d+)", text):
            assert re.split(r", | or ", listed) == supported, f"{page}: Python {listed}"
        for low, high in re.findall(r"\b(3\.\d+)-(3\.\d+)\b", text):
            assert [low, high] == [supported[0], supported[-1]], f"{page}: {low}-{high}"
        launcher = re.findall(r"\bpy -(3\.\d+)", text)
        assert set(launcher) <= set(supported), f"{page}: py -{launcher}"


def test_the_windows_line_offers_every_supported_python_to_the_launcher():
    (windows,) = [line for line in facilitator.SETUP_EMAIL if "Windows" in line]
    assert re.findall(r"`py -(3\.\d+)", windows) == _supported()
    assert "pp_demo doctor" in windows and "reproduce" not in windows
    for page in (INSTALL, CHECKLIST):
        assert windows in page


def _instructions(text):
    """Paragraphs and list items: where a condition ("on Linux or macOS") governs a command."""
    return [part for para in re.split(r"\n\s*\n", text) for part in re.split(r"\n(?=\s*- )", para)]


# How a page rules native Windows out where it offers ColossalAI beside a word about Windows.
RULED_OUT = re.compile(
    "|".join(
        [
            r"not (be )?installed on native Windows",
            r"not on native Windows",
            r"native Windows cannot",
            r"refuses (win32|native Windows)",
            r"on Linux or macOS",
            r"\(Linux, macOS or WSL2\)",
        ]
    )
)


def test_no_colossalai_install_is_offered_on_native_windows():
    installs = re.compile(r"pip install[^`\n]*colossalai|make colossalai")
    for page in PAGES:
        for part in _instructions((ROOT / page).read_text(encoding="utf-8")):
            if installs.search(part) and "Windows" in part:  # said together: Windows must be ruled out
                assert RULED_OUT.search(part), f"{page}: {part.strip()[:300]}"
                assert "the way on Windows" not in part, f"{page}: {part.strip()[:300]}"


def test_the_readme_conda_lines_install_colossalai_on_linux_or_macos_only():
    conda = README.split("- conda")[1].split("\n## ")[0]
    offered = conda.index("pip install --no-deps colossalai==0.5.0")
    assert "Linux or macOS only" in conda[:offered] and "not installed\n  on native Windows" in conda[:offered]
    assert "WSL2" in conda


def test_every_page_that_starts_lab_by_hand_starts_it_as_make_lab_does():
    """At the checkout, opening at notebooks/: the notebooks' links to docs/ then resolve."""
    pages = [*PAGES, "docs/troubleshooting.md"]
    for page in pages:
        for command in _commands((ROOT / page).read_text(encoding="utf-8")):
            if re.search(r"-m jupyter(lab| lab)\b", command):
                assert OPEN_AT in command and not re.search(r"\snotebooks/?$", command), f"{page}: {command}"
