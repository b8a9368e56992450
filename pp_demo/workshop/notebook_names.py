"""The names a notebook's code cells define: whether a ``NameError`` is a cell not run yet, or a typo.

A kernel knows only the cells it ran. After a restart, ``model`` is undefined because its cell
has not run again, and the fix is to run the cells above; ``modle`` is undefined because nobody
defines it, and the fix is the spelling. The notebook's own file tells the two apart: the names
its code cells bind. Which file: the one Jupyter names for the kernel (``__session__``, set by
ipykernel from ``JPY_SESSION_NAME``), the notebooks beside the kernel's working folder, and the
workbook's own ``notebooks/`` (a checkout's). Read as text: nothing is executed.
"""

import ast
import json
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

__all__ = ["defined_by_notebooks", "names_bound"]

_WORKBOOK = Path(__file__).resolve().parents[2] / "notebooks"  # a checkout's; absent from an installed wheel


def names_bound(source: str) -> set[str]:
    """The names one cell's code binds (assignments, ``def``, ``class``, imports, loop and ``with``
    targets); its IPython magics and shell lines are left out, and a cell Python cannot parse binds
    nothing."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


@lru_cache(maxsize=64)
def _names_of_file(path: str, modified: float) -> frozenset[str]:
    """The names ``path``'s code cells bind (``modified``: its mtime, so an edited file is read again)."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):  # unreadable, not JSON, not a notebook
        return frozenset()
    found: set[str] = set()
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found |= names_bound("".join(source) if isinstance(source, list) else str(source))
    return frozenset(found)


def _notebooks(session: object) -> Iterable[Path]:
    if isinstance(session, str) and session.endswith(".ipynb"):
        yield Path(session)
    for folder in (Path(os.getcwd()), _WORKBOOK):
        if folder.is_dir():
            yield from sorted(folder.glob("*.ipynb"))


def defined_by_notebooks(session: object = None) -> frozenset[str] | None:
    """Every name the notebooks in reach define (``session``: the kernel's ``__session__``); None
    when no notebook could be read, so that the caller cannot tell."""
    found: set[str] = set()
    seen = False
    for path in _notebooks(session):
        try:
            modified = path.stat().st_mtime
        except OSError:
            continue
        seen = True
        found |= _names_of_file(str(path), modified)
    return frozenset(found) if seen else None
