"""The import rule: pp_demo's imports flow one way, down the list in the package docstring.

The layers are read from ``pp_demo/__init__``'s docstring, in the order it names them
(``errors`` < ``silent_imports`` < ``pooling/`` < ... < ``cli``). A module may import from its own
folder in any order, and from any folder listed before its own; never from one listed after.
Every import counts: at the top of a file, inside a function (a lazy import), relative or
absolute. And the modules' own graph has no cycle, inside a folder either.
"""

import ast
import re
from pathlib import Path

import pp_demo

PACKAGE = Path(pp_demo.__file__).parent
TOP = "pp_demo"


def _module_name(path: Path) -> str:
    """pp_demo/pooling/rules.py -> pp_demo.pooling.rules; a folder's __init__ is the folder."""
    parts = [TOP, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layers() -> list[str]:
    """The folders and top-level modules in the docstring's order: ``pooling/`` reads as pooling."""
    named = re.findall(r"``([a-z_0-9]+)/?``", pp_demo.__doc__ or "")
    return list(dict.fromkeys(n for n in named if f"{TOP}.{n}" in MODULES))


def _component(module: str) -> str:
    """The layer a module belongs to: its folder, or itself for a top-level file."""
    if module == f"{TOP}.__main__":
        return "cli"  # `python -m pp_demo` is the command line
    return module.split(".")[1] if module != TOP else TOP


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (``from .x import y`` inside pp_demo.bench ...)."""
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


def test_the_docstring_names_every_folder_and_top_level_module_once():
    named = [n for n in re.findall(r"``([a-z_0-9]+)/?``", pp_demo.__doc__ or "") if f"{TOP}.{n}" in MODULES]
    components = {_component(m) for m in MODULES if m != TOP}
    assert sorted(set(named)) == sorted(components)
    assert len(named) == len(set(named)), "a layer is named twice"


def test_the_layers_are_the_ones_the_package_is_built_from():
    # The order the issue and the architecture page give; the docstring is where it is read from.
    assert _layers() == [
        "errors",
        "bounds",
        "silent_imports",
        "output_paths",
        "pooling",
        "pipeline",
        "verify",
        "colossalai",
        "training",
        "bench",
        "figures",
        "workshop",
        "exercises",
        "cli",
    ]


def test_no_module_imports_from_a_layer_listed_after_its_own():
    rank = {name: i for i, name in enumerate(_layers())}
    upward = [
        f"{importer} imports {target}"
        for importer, targets in _graph().items()
        for target in sorted(targets)
        if importer != TOP and rank.get(_component(target), len(rank)) > rank[_component(importer)]
    ]
    assert upward == []


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
        "    from pp_demo.pipeline import jobs\n"
    )
    assert imports_of("pp_demo.bench", source, is_package=True) == {
        "pp_demo.bench.report",
        "pp_demo.bench.timers",
        "pp_demo.pooling.padding_table",
        "pp_demo.verify.checker.judge",
        "pp_demo.pipeline.jobs",
    }
    assert imports_of("pp_demo.exercises.nb02", "from .core import register\n") == {"pp_demo.exercises.core"}


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
