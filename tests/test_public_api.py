"""The public API: one import path per name, every name annotated.

The module map in the package docstring and the import rule are tested in
``tests/repo/test_import_rule.py``."""

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

import pp_demo

PACKAGE = Path(pp_demo.__file__).parent
FOLDERS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))  # pooling, pipeline, ...
# What `pp_demo.X` can also name once imported: a top-level module or a folder.
TOP_LEVEL = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")) + FOLDERS
# Every module, as pp_demo.MODULE names it: "pooling.rules", "cli", "bench" (a folder's __init__).
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
    if p.name != "__main__.py" and p != PACKAGE / "__init__.py"
)


def test_no_public_name_is_also_a_module_name():
    # importing pp_demo.X sets the package's attribute X to the module, which would then
    # hide a public name X (a function) from `pp_demo.X` and `from pp_demo import X`
    assert sorted(set(pp_demo.__all__) & set(TOP_LEVEL)) == []


@pytest.mark.parametrize("name", pp_demo.__all__)
def test_each_public_name_has_one_home_besides_the_package(name):
    obj = getattr(pp_demo, name)
    home = pp_demo._WHERE[name]
    assert name in importlib.import_module(f"pp_demo.{home}").__all__
    others = [
        m
        for m in MODULES
        if m not in (home, "cli")
        and m.split(".")[0] != "exercises"
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
