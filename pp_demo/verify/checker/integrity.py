"""Did the callable change the checker's own code? Then no verdict comes from this process.

The callable runs in the checker's process (the command's child, or the caller's under
``check_forward``), so it could replace the function that judges it (``judge._judge``), the
report, or the pooling rules, and read as a pass. The checker is no sandbox: a callable can
always do what it likes in its own process (patch torch, write over the report). What it can no
longer do by accident or on purpose is change pp_demo's functions and classes and still get a
verdict: every function, class method and code object of the loaded ``pp_demo`` modules is
noted before the first call and compared after each one; a change is a failure of the callable,
named, exit 3.
"""

import sys
import types
from typing import Any

__all__ = ["Snapshot"]


def _entries(module: types.ModuleType) -> dict[str, tuple[int, int]]:
    """``name`` (``Class.method`` for methods) -> (id of the object, id of its code)."""
    found: dict[str, tuple[int, int]] = {}

    def note(name: str, value: Any) -> None:
        found[name] = (id(value), id(getattr(value, "__code__", None)))

    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType | type):
            if getattr(value, "__module__", None) != module.__name__:
                continue  # imported from elsewhere: noted where it is defined
            note(name, value)
            if isinstance(value, type):
                for attribute, member in list(vars(value).items()):
                    member = getattr(member, "__func__", member)  # staticmethod, classmethod
                    member = member.fget if isinstance(member, property) else member
                    if isinstance(member, types.FunctionType):
                        note(f"{name}.{attribute}", member)
    return found


class Snapshot:
    """pp_demo's loaded code as it was when made."""

    def __init__(self) -> None:
        self.modules = {name: _entries(module) for name, module in self._loaded().items()}

    @staticmethod
    def _loaded() -> dict[str, types.ModuleType]:
        return {
            name: module
            for name, module in list(sys.modules.items())
            if (name == "pp_demo" or name.startswith("pp_demo.")) and isinstance(module, types.ModuleType)
        }

    def changed(self) -> str | None:
        """The first function or class of pp_demo replaced (or removed) since, as ``module.name``."""
        loaded = self._loaded()
        for module_name, before in self.modules.items():
            module = loaded.get(module_name)
            now = _entries(module) if module is not None else {}
            for name, ids in before.items():
                if now.get(name) != ids:
                    return f"{module_name}.{name}"
        return None
