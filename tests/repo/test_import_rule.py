"""The import rule: pp_demo's imports flow one way, onto the layers docs/architecture.md names.

The layers are read from the page's folder map: each bullet names one or more layers and, in
brackets, the layers they stand on (``- `training/` [`ranks`]: ...``). A module may import
from its own folder in any order, from the layers of its own bullet, and from every layer its bullet
stands on, directly or through another; never from any other.
Every import counts: at the top of a file, inside a function (a lazy import), relative or
absolute. And the modules' own graph has no cycle, inside a folder either.
"""

import ast
import json
import re
from pathlib import Path

import pp_demo

PACKAGE = Path(pp_demo.__file__).parent
PAGE = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
TOP = "pp_demo"


def _module_name(path: Path) -> str:
    """pp_demo/core.py -> pp_demo.core; a folder's __init__ is the folder."""
    parts = [TOP, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


BULLET = re.compile(r"^- ((?:`[a-z_0-9]+/?`(?:, )?)+) \[([^\]]*)\]:", re.M)
NAME = r"`([a-z_0-9]+)/?`"


def _layers() -> list[str]:
    """The folders and top-level modules in the order of the docstring's bullets: ``pooling/`` reads as pooling."""
    bullets = "".join(names for names, _ in BULLET.findall(PAGE))
    return [n for n in re.findall(NAME, bullets) if f"{TOP}.{n}" in MODULES]


def _stands_on() -> dict[str, set[str]]:
    """``{layer: the layers its bullet names in brackets, and its bullet's other layers}``."""
    found: dict[str, set[str]] = {}
    for names, on in BULLET.findall(PAGE):
        group = set(re.findall(NAME, names))
        for layer in group:
            found[layer] = (group - {layer}) | set(re.findall(NAME, on))
    return found


def _allowed(layer: str, on: dict[str, set[str]]) -> set[str]:
    """Every layer ``layer`` may import from: what it stands on, and what those stand on, all the way down."""
    seen: set[str] = set()
    todo = list(on[layer])
    while todo:
        if (nxt := todo.pop()) not in seen:
            seen.add(nxt)
            todo.extend(on.get(nxt, ()))
    return seen - {layer}


def _component(module: str) -> str:
    """The layer a module belongs to: its folder, or itself for a top-level file."""
    if module == f"{TOP}.__main__":
        return "cli"  # `python -m pp_demo` is the command line
    return module.split(".")[1] if module != TOP else TOP


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (``from .x import y`` inside pp_demo.instruments.bench ...)."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, source: str, is_package: bool = False) -> set[str]:
    """The pp_demo modules ``source`` imports, anywhere in the file. ``from pkg import name`` counts
    as importing pkg.name where that is a module, else pkg itself."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == TOP)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            if target.split(".")[0] != TOP:
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
    return found - {module}


def _graph() -> dict[str, set[str]]:
    return {
        name: imports_of(name, path.read_text(), path.name == "__init__.py") & set(MODULES)
        for name, path in MODULES.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a list of nodes (first == last), or [] where there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_docstring_gives_every_folder_and_top_level_module_one_bullet():
    bullets = [re.findall(NAME, names) for names, _ in BULLET.findall(PAGE)]
    named = [n for names in bullets for n in names]
    components = {_component(m) for m in MODULES if m != TOP}
    assert sorted(set(named)) == sorted(components)
    assert len(named) == len(set(named)), "a layer has two bullets"


def test_the_layers_are_the_ones_the_package_is_built_from():
    # What the architecture page gives, read from the page itself.
    assert _stands_on() == {
        "errors": {"bounds", "silent_imports", "output_paths"},
        "bounds": {"errors", "silent_imports", "output_paths"},
        "silent_imports": {"errors", "bounds", "output_paths"},
        "output_paths": {"errors", "bounds", "silent_imports"},
        "core": {"errors", "bounds"},
        "pooling": {"core"},
        "ranks": {"core"},
        "verify": {"ranks", "pooling", "silent_imports"},
        "colossalai": {"pooling", "silent_imports"},
        "records": {"verify"},
        "training": {"ranks", "pooling"},
        "figures": {"records"},
        "deepspeed": {"verify"},
        "workshop": {"figures", "colossalai", "deepspeed"},
        "exercises": {"records"},
        "cli": {"training", "workshop", "instruments", "deepspeed"},
        "instruments": {"colossalai", "records"},
    }


def test_every_layer_stands_on_layers_only_and_the_foundation_on_the_standard_library():
    on = _stands_on()
    assert sorted(on) == sorted(_layers())
    assert sorted(n for targets in on.values() for n in targets if n not in on) == []
    assert "[the standard library]" in PAGE


def test_the_independent_layers_know_nothing_of_one_another():
    # training/, the instruments and exercises/ stand on none of each other
    on = _stands_on()
    for a in ("training", "instruments", "exercises"):
        for b in {"training", "instruments", "exercises"} - {a}:
            assert b not in _allowed(a, on), f"{a} stands on {b}"


def test_each_layer_a_bullet_says_it_stands_on_is_one_its_modules_import():
    # A claim in brackets is a fact of the code: a layer named there that no module of the bullet
    # imports (lazily or not) is a claim that drifted. The foundation's bullet stands on the
    # standard library, its layers named beside one another, not in brackets.
    direct: dict[str, set[str]] = {}
    for importer, targets in _graph().items():
        if importer != TOP:
            direct.setdefault(_component(importer), set()).update(_component(t) for t in targets)
    claimed = {names: set(re.findall(NAME, on)) for names, on in BULLET.findall(PAGE)}
    unused = {
        names: sorted(on - set().union(*(direct.get(n, set()) for n in re.findall(NAME, names))))
        for names, on in claimed.items()
    }
    assert {names: layers for names, layers in unused.items() if layers} == {}


def test_no_module_imports_from_a_layer_it_does_not_stand_on():
    on = _stands_on()
    offending = [
        f"{importer} imports {target}"
        for importer, targets in _graph().items()
        for target in sorted(targets)
        if importer != TOP
        and _component(target) != _component(importer)
        and _component(target) not in _allowed(_component(importer), on)
    ]
    assert offending == []


def test_the_rule_refuses_an_import_of_a_layer_not_stood_on():
    # the rule is only as good as its closure: the instruments stand on colossalai, which stands on verify ...
    on = _stands_on()
    assert {"colossalai", "records", "verify", "ranks", "pooling", "core", "errors"} <= _allowed("instruments", on)
    assert "training" not in _allowed("instruments", on) and "cli" not in _allowed("workshop", on)


def test_no_module_inside_the_package_imports_the_package_facade():
    # `pp_demo.NAME` is for readers; a module importing it would depend on every layer at once.
    assert sorted(m for m, targets in _graph().items() if TOP in targets) == []


def test_the_modules_import_graph_has_no_cycle():
    assert _cycle(_graph()) == []


def test_the_parser_sees_lazy_relative_and_absolute_imports():
    # The rule is only as good as its parser: an import inside a function, `from . import x`,
    # `from .x import y` inside a folder and `from pp_demo.pkg import module` must all be found.
    source = (
        "import torch\nfrom .report import load_results\n\ndef f():\n    from . import timers\n"
        "    import pp_demo.pooling.padding_table\n    from pp_demo.verify.checker.judge import check_forward\n"
        "    from pp_demo.ranks import jobs\n"
    )
    assert imports_of("pp_demo.instruments.bench", source, is_package=True) == {
        "pp_demo.instruments.bench.report",
        "pp_demo.instruments.bench.timers",
        "pp_demo.pooling.padding_table",
        "pp_demo.verify.checker.judge",
        "pp_demo.ranks.jobs",
    }
    assert imports_of("pp_demo.exercises.nb02", "from .core import register\n") == {"pp_demo.exercises.core"}


# Who the instruments are for: this repository's maintainers. The core, the ranks, the notebooks and
# what they use read the instruments' results through records/, and import nothing of them.
NOT_INSTRUMENTS = ("core", "ranks", "pooling", "training", "figures", "exercises", "workshop", "records")
INSTRUMENTS = f"{TOP}.instruments"
NOTEBOOKS = PACKAGE.parent / "notebooks"
IMPORT_LINE = re.compile(r"^\s*(?:from\s+(\S+)\s+import\b|import\s+(.+))")


def _names_an_instrument(module: str) -> bool:
    return module == INSTRUMENTS or module.startswith(f"{INSTRUMENTS}.")


def notebook_imports(source: str) -> set[str]:
    """The modules a code cell's import lines name (a cell may hold magics, so lines, not ``ast``)."""
    found = set()
    for line in source.splitlines():
        if match := IMPORT_LINE.match(line.split("#")[0]):
            named = [match[1]] if match[1] else [n.split(" as ")[0] for n in match[2].split(",")]
            found.update(n.strip() for n in named if n.strip())
    return found


def _notebook_code_cells() -> dict[str, list[str]]:
    return {
        path.name: ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
    }


def test_nothing_the_learner_meets_imports_an_instrument():
    assert INSTRUMENTS in MODULES  # the folder the rule is about exists
    learner = {m: t for m, t in _graph().items() if _component(m) in NOT_INSTRUMENTS}
    assert {_component(m) for m in learner} == set(NOT_INSTRUMENTS)  # every part was read
    offending = sorted(f"{m} imports {t}" for m, targets in learner.items() for t in targets if _names_an_instrument(t))
    assert offending == []


def test_no_notebook_imports_an_instrument():
    cells = _notebook_code_cells()
    assert len(cells) >= 10 and all(cells.values())
    imported = {name: set().union(*map(notebook_imports, sources)) for name, sources in cells.items()}
    assert f"{TOP}.records.bench" in imported["10_schedules.ipynb"]  # the reader sees their imports
    offending = sorted(
        f"{name} imports {m}" for name, names in imported.items() for m in names if _names_an_instrument(m)
    )
    assert offending == []


def test_the_instrument_checks_would_catch_an_import():
    # the notebooks' reader sees each spelling of an import line, and the check tells an instrument apart
    cell = (
        "%matplotlib inline\nimport torch, pp_demo.instruments.bench as b\n    from pp_demo.instruments import bench\n"
    )
    assert notebook_imports(cell) == {"torch", "pp_demo.instruments.bench", "pp_demo.instruments"}
    assert [m for m in sorted(notebook_imports(cell)) if _names_an_instrument(m)] == [
        "pp_demo.instruments",
        "pp_demo.instruments.bench",
    ]
    assert not _names_an_instrument(f"{INSTRUMENTS}_x") and not _names_an_instrument(f"{TOP}.records.bench")
    lazy = "def f():\n    from pp_demo.instruments.engine.run import batch_of\n"
    assert imports_of("pp_demo.figures.bench", lazy) == {"pp_demo.instruments.engine.run"}


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def _tools_graph() -> dict[str, set[str]]:
    """``{tool: the tools it imports}``, tools imported as a package (``from tools import x``)."""
    folder = PACKAGE.parent / "tools"
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name in names:
        found = set()
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "tools":
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tools."):
                found.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[-1] for a in node.names if a.name.startswith("tools."))
        graph[name] = found & names
    return graph


def test_the_tools_import_each_other_as_a_package_and_one_way():
    folder = PACKAGE.parent / "tools"
    bare = [  # `import episodes` works only with tools/ itself on sys.path
        f"{p.name} imports {a.name}"
        for p in sorted(folder.glob("*.py"))
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Import)
        for a in node.names
        if (folder / f"{a.name}.py").is_file()
    ]
    assert bare == []
    graph = _tools_graph()
    assert graph["facilitator"] >= {"episodes", "agenda"}  # the parser sees the tools' imports
    assert _cycle(graph) == []


def test_no_test_imports_from_a_conftest():
    # two conftest.py files (tests/, tests/browser/): importing a name from "conftest" picks either, by
    # collection order; shared things are fixtures
    tests = PACKAGE.parent / "tests"
    needle = "from " + "conftest import"  # spelled apart, so this file is not its own offender
    offenders = [str(p.relative_to(tests)) for p in tests.rglob("*.py") if needle in p.read_text()]
    assert offenders == []
