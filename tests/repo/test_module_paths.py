"""Module paths written as text name modules that exist: a move or a rename breaks this test,
not a spawned rank, the doctor's probe or a reader's copied command.

Such paths hide in strings the interpreter never checks: the modules the fork server preloads
(``pipeline/launch.py``), the ones the doctor's probe imports, the exercises' refusal lists,
``python -m pp_demo...`` lines and ``package.module:function`` arguments in the docs. Every
``pp_demo.a.b`` or ``pp_demo.a.b:name`` in the repository's text files is checked: the longest
prefix that is a module file, then at most the one name defined at the top of that file.
"""

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pp_demo"
DOTTED = re.compile(r"\bpp_demo(?:\.[A-Za-z_][A-Za-z_0-9]*)+(?::[A-Za-z_][A-Za-z_0-9]*)?")
# Placeholders in prose ("pp_demo.NAME"), never meant as a real module.
PLACEHOLDERS = {"pp_demo.X", "pp_demo.NAME", "pp_demo.MODULE", "pp_demo.pkg"}
TEXT_SUFFIXES = {".patch", ".py", ".md", ".toml", ".cfg", ".yml", ".yaml", ".ipynb", ".txt", ".mk", ".j2", ".json"}


def _text_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
        paths = [REPO / line for line in listed.splitlines()]
    except (OSError, subprocess.CalledProcessError):  # an unpacked sdist: no git
        paths = [p for p in REPO.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts]
    # results/ holds records a run wrote, with the names of the day it ran: rerunning fixes those.
    return [
        p
        for p in paths
        if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name == "Makefile") and p.parts[len(REPO.parts)] != "results"
    ]


def _module_file(dotted: str) -> Path | None:
    relative = Path(*dotted.split("."))
    for candidate in (REPO / relative.with_suffix(".py"), REPO / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if path == PACKAGE / "__init__.py":  # pp_demo.NAME: the public names it loads on first use
        import pp_demo

        names.update(pp_demo.__all__)
    return names


def names_a_module(reference: str) -> bool:
    """``pp_demo.a.b`` is a module, or ``pp_demo.a.b.name`` / ``pp_demo.a.b:name`` a name at its top."""
    dotted, _, attribute = reference.partition(":")
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        found = _module_file(".".join(parts[:cut]))
        if found:
            rest = parts[cut:] + ([attribute] if attribute else [])
            dunder = bool(rest) and rest[0].startswith("__") and rest[0].endswith("__")  # __file__, __doc__
            return not rest or dunder or (len(rest) <= 2 and rest[0] in _top_level_names(found))
    return False


def _references() -> dict[str, list[str]]:
    """``{pp_demo.a.b: [files that write it]}`` over the repository's text files."""
    found: dict[str, list[str]] = {}
    for path in _text_files():
        if path == Path(__file__).resolve():  # its own examples of wrong paths
            continue
        for reference in set(DOTTED.findall(path.read_text(errors="replace"))):
            if reference not in PLACEHOLDERS:
                found.setdefault(reference, []).append(str(path.relative_to(REPO)))
    return found


def test_every_module_path_written_in_the_repository_names_a_module():
    references = _references()
    assert len(references) > 20  # the scan reads the files at all
    broken = {ref: files for ref, files in sorted(references.items()) if not names_a_module(ref)}
    assert broken == {}


@pytest.mark.parametrize(
    "reference, right",
    [
        ("pp_demo.ranks.on_rank", True),
        ("pp_demo.colossalai.forwards:colossalai_forward", True),
        ("pp_demo.core.FIX", True),
        ("pp_demo:build_model", True),
        ("pp_demo:fixed_pipeline", False),  # the package names the core's only,
        ("pp_demo.ranks.ranks", False),  # the old name of on_rank
        ("pp_demo.ranks.on_rank:no_such_name", False),
        ("pp_demo.distributed", False),
    ],
)
def test_the_resolver_tells_a_module_from_a_moved_one(reference, right):
    assert names_a_module(reference) is right


def test_the_preloaded_and_probed_module_lists_name_modules():
    # The two lists the code imports by name, read from the code itself (no import of torch).
    from pp_demo.ranks import launch
    from pp_demo.workshop import doctor

    listed = [m for m in launch._PRELOAD if m.startswith("pp_demo")] + list(doctor.NOTEBOOK_MODULES)
    assert len(listed) > 5
    assert [m for m in listed if _module_file(m) is None] == []


def test_every_folder_of_python_files_is_a_package_the_wheel_finds():
    # pyproject's `packages = { find = { include = ["pp_demo*"] } }` finds folders with an
    # __init__.py only: a folder of modules without one would be left out of the wheel.
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    assert sorted(str(f.relative_to(REPO)) for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_patches_have_one_copy_the_package_ships():
    # verify-pr applies them from package data (pp_demo/instruments/pull_request/patches/): a second copy
    # elsewhere in the checkout could drift from the one the wheel carries.
    from pp_demo.instruments.pull_request.sdists import PATCHES

    everywhere = [p for p in _text_files() if p.name.endswith(".patch")] + [
        p for p in REPO.glob("*/*.patch") if ".venv" not in p.parts
    ]
    assert PATCHES == PACKAGE / "instruments" / "pull_request" / "patches"
    assert sorted({p.parent for p in everywhere}) == [PATCHES]


# A file path the package's or the tests' code names (``tests/ranks/test_looped.py``,
# ``pp_demo/core.py``), or a bare test file's name; placeholders name no one file.
# (results/ holds what runs write: a path there may name a file a run has yet to write.)
FILE_PATH = re.compile(r"\b(?:pp_demo|tests|tools|docs|notebooks)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.[a-z]+\b")
TEST_FILE = re.compile(r"(?<![/\w])test_[a-z0-9_]+\.py\b")
PATH_PLACEHOLDERS = re.compile(r"FOLDER|NN|test_x\b")


def _code_files() -> list[Path]:
    return sorted(p for folder in ("pp_demo", "tests", "tools") for p in (REPO / folder).rglob("*.py"))


def _named_paths(text: str) -> tuple[set[str], set[str]]:
    paths = {p for p in FILE_PATH.findall(text) if not PATH_PLACEHOLDERS.search(p)}
    return paths, {name for name in TEST_FILE.findall(text) if not PATH_PLACEHOLDERS.search(name)}


def test_every_file_path_in_the_code_and_its_docstrings_exists():
    test_files = {p.name for p in (REPO / "tests").rglob("test_*.py")}
    missing, named = [], 0
    for path in _code_files():
        if path == Path(__file__).resolve():  # its own examples below
            continue
        paths, names = _named_paths(path.read_text())
        named += len(paths) + len(names)
        where = path.relative_to(REPO)
        missing += [f"{where}: {p}" for p in sorted(paths) if not (REPO / p).exists()]
        missing += [f"{where}: {n}" for n in sorted(names) if n not in test_files]
    assert named > 50  # the scan reads the files at all
    assert missing == []


def test_the_path_reader_finds_paths_and_names_and_skips_placeholders():
    text = (
        "tested by tests/ranks/test_looped.py and test_rules.py; see pp_demo/core.py.\n"
        "a notebook's module pp_demo/exercises/nbNN.py, a test FOLDER/test_x.py, results/tmp/"
    )
    assert _named_paths(text) == (
        {"tests/ranks/test_looped.py", "pp_demo/core.py"},
        {"test_rules.py"},
    )


def test_no_internal_issue_number_is_named_in_the_code():
    # a reader of the repository cannot look this tracker's issues up; the issues the code cites
    # are other projects' (ColossalAI issue 6457, PEFT issue 3620), numbered in the hundreds and up
    internal = re.compile(r"\b[Ii]ssues? #?(\d{1,2})\b")
    named = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _code_files()
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if internal.search(line)
    ]
    assert named == []


def test_each_noqa_silences_a_rule_the_linter_runs():
    # a noqa for a rule ruff does not select silences nothing and reads as if it did
    import tomllib

    selected = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]["select"]
    noqa = re.compile(r"#\s*noqa:\s*([A-Z]+[0-9]+)")
    needless = [
        f"{path.relative_to(REPO)}:{number}: {code}"
        for path in _code_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for code in noqa.findall(line)
        if not any(code.startswith(family) and code[len(family)].isdigit() for family in selected)
        or (code == "E402" and number < _first_code_line(path))
    ]
    assert needless == []


def _first_code_line(path: Path) -> int:
    """The line of the first top-level statement that is neither an import nor the docstring:
    an import above it is at the top of the file, where E402 has nothing to say."""
    code = [
        n
        for n in ast.parse(path.read_text()).body
        if not isinstance(n, (ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    return code[0].lineno if code else 10**9
