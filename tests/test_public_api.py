"""The public API: one import path per name, every name annotated, the module map in the
package docstring complete and true, and imports flowing one way down that map."""

import ast
import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

import pp_demo

PACKAGE = Path(pp_demo.__file__).parent
SUBPACKAGES = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))  # exercises, bench
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")) + SUBPACKAGES


def _documented_order():
    """Module names in the order the package docstring lists them."""
    names = re.findall(r"``([a-z_0-9]+)``", pp_demo.__doc__)
    return list(dict.fromkeys(n for n in names if n in MODULES))


def _imported_modules(source, depth=0):
    """The pp_demo modules a file imports (relative or absolute, at any depth in the file);
    ``depth`` is 1 for a file inside ``pp_demo/exercises``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 == depth:  # from .x import y, or from . import x
                    found.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
            elif (node.module or "").startswith("pp_demo."):
                found.add(node.module.split(".")[1])
            elif node.module == "pp_demo":
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("pp_demo."))
    return {m for m in found if m in MODULES}


def _module_of(path):
    return path.parent.name if path.parent.name in SUBPACKAGES else path.stem


def test_the_docstring_lists_every_module_exactly_once():
    listed = re.findall(r"``([a-z_0-9]+)``", pp_demo.__doc__)
    modules = [n for n in listed if n in MODULES]
    assert sorted(set(modules)) == sorted(MODULES)
    assert len(modules) == len(set(modules)), "a module is listed twice"


def test_no_module_imports_one_listed_after_it():
    order = {name: i for i, name in enumerate(_documented_order())}
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.stem in ("__init__", "__main__") and path.parent == PACKAGE:
            continue
        here = _module_of(path)
        depth = len(path.relative_to(PACKAGE).parts) - 1
        upward += [
            f"{path.name} imports {m}"
            for m in _imported_modules(path.read_text(), depth)
            if m != here and order[m] > order[here]
        ]
    assert upward == []


def test_the_import_parser_sees_lazy_relative_and_absolute_imports():
    # The direction test is only as good as its parser: an import inside a function, a
    # `from . import x` and an absolute pp_demo import must all be found.
    source = (
        "import torch\nfrom .rules import FIX\n\ndef f():\n    from . import cli\n"
        "    import pp_demo.pooling.padding_table\n    from pp_demo.verify.checker import check_forward\n"
    )
    assert _imported_modules(source) == {"rules", "cli", "table", "checker"}
    assert _imported_modules("from ..schedules import gpipe_slots\nfrom .core import register\n", depth=1) == {
        "schedules"
    }


def test_no_public_name_is_also_a_module_name():
    # importing pp_demo.X sets the package's attribute X to the module, which would then
    # hide a public name X (a function) from `pp_demo.X` and `from pp_demo import X`
    assert sorted(set(pp_demo.__all__) & set(MODULES)) == []


@pytest.mark.parametrize("name", pp_demo.__all__)
def test_each_public_name_has_one_home_besides_the_package(name):
    obj = getattr(pp_demo, name)
    home = pp_demo._WHERE[name]
    assert name in importlib.import_module(f"pp_demo.{home}").__all__
    others = [
        m
        for m in MODULES
        if m not in (home, "exercises", "cli")
        and name in getattr(importlib.import_module(f"pp_demo.{m}"), "__all__", ())
    ]
    assert others == [], f"{name} is also exported by {others}"
    if inspect.isfunction(obj) or inspect.isclass(obj):
        assert obj.__module__ == f"pp_demo.{home}"


def _unannotated(function):
    signature = inspect.signature(function)
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


@pytest.mark.parametrize("name", pp_demo.__all__)
def test_each_public_function_class_and_field_is_annotated(name):
    obj = getattr(pp_demo, name)
    if inspect.isfunction(obj):
        assert _unannotated(obj) == [], name
    elif inspect.isclass(obj):
        if dataclasses.is_dataclass(obj):
            assert all(f.type is not None for f in dataclasses.fields(obj))
        for attribute, member in vars(obj).items():
            if attribute.startswith("_") and attribute != "__init__":
                continue
            if isinstance(member, property):
                member = member.fget
            elif isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if inspect.isfunction(member) and member.__qualname__.startswith(obj.__name__):
                assert _unannotated(member) == [], f"{name}.{attribute}"


def test_an_unannotated_function_is_caught_by_the_annotation_check():
    def bare(x, y: int):
        return x

    assert _unannotated(bare) == ["x", "return"]
