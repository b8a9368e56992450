"""Refuse notebooks whose stored outputs are not those of one fresh, top-to-bottom run.

Strict nbval re-runs every notebook and compares each cell with its stored outputs, so
those outputs must be what a fresh kernel prints: code cells counted 1, 2, ... n in order
(a gap or a repeat means cells were re-run by hand or skipped), nothing on stderr and no
error. Empty code cells are the exception: Jupyter does not run them, so they keep no count.

Used by the pre-commit hook and ``make lint``::

    python tools/check_notebooks.py notebooks/*.ipynb

It prints one line per problem and exits 1 if there is any. Standard library only, so the
hook runs in any environment. It lives in tools/, not in the package: it checks this
repository's files and is no part of the workbook's API.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FIX = "rerun it top to bottom in a fresh kernel (make notebooks)"


def _text(value: Any) -> str:
    """A notebook stores text either as one string or as a list of lines."""
    return "".join(value) if isinstance(value, list) else str(value)


def _code_cells(nb: dict[str, Any]) -> list[dict[str, Any]]:
    return [cell for cell in nb.get("cells", []) if cell.get("cell_type") == "code"]


def _output_problems(where: str, outputs: list[dict[str, Any]], count: Any) -> Iterator[str]:
    for output in outputs:
        kind = output.get("output_type")
        if kind == "error":
            yield f"{where}: stored an error ({output.get('ename', '?')}: {output.get('evalue', '')})"
        elif kind == "stream" and output.get("name") == "stderr":
            first = (_text(output.get("text", "")).strip().splitlines() or [""])[0]
            yield f"{where}: wrote to stderr: {first[:120]!r}"
        elif kind == "execute_result" and output.get("execution_count") != count:
            yield f"{where}: result counted {output.get('execution_count')}, cell counted {count}"


def notebook_problems(nb: dict[str, Any]) -> list[str]:
    """Everything that shows the stored outputs are not one fresh top-to-bottom run."""
    problems = []
    expected = 1
    for number, cell in enumerate(_code_cells(nb), 1):  # numbered as Jupyter users count them
        where = f"code cell {number}"
        count = cell.get("execution_count")
        if not _text(cell.get("source", "")).strip():
            if count is not None or cell.get("outputs"):
                problems.append(f"{where}: empty, yet stored with a count or outputs")
            continue
        if count != expected:
            problems.append(f"{where}: execution count {count}, expected {expected}")
        expected = (count if isinstance(count, int) else expected) + 1
        problems.extend(_output_problems(where, cell.get("outputs", []), count))
    return problems


def check_file(path: Path) -> list[str]:
    """The problems of one notebook file, each a line naming the file; unreadable is one."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return [f"{path}: cannot read it as a notebook: {err}"]
    if not isinstance(nb, dict) or nb.get("nbformat") != 4:
        return [f"{path}: not an nbformat 4 notebook"]
    return [f"{path}: {problem}" for problem in notebook_problems(nb)]


def main(argv: list[str] | None = None) -> int:
    paths = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    problems = [line for path in paths for line in check_file(path)]
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} problem(s): {FIX}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
