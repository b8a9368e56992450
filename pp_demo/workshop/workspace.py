"""The attendee's working copy of the notebooks: ``workspace/``, made by ``make lab``, kept out of git.

The repository's notebooks are stored with their outputs: nbval checks them, and the site shows
them. Opened as they are, a notebook shows the answer to every "Predict before you read on"
right under the question, and an attendee's edits would conflict with the ``git pull`` of the
workshop's morning. So Lab opens a copy instead, with every output cleared:

- a notebook missing from ``workspace/`` is copied in, cleared;
- a copy the attendee has not touched (it is still what was written) follows the repository:
  it is written again when the repository's notebook changed;
- a copy the attendee has run or edited is theirs: it is never overwritten. When the
  repository's notebook changed since, one line says so, and how to take the new one.

``workspace/`` sits beside ``notebooks/`` in the checkout, so the notebooks' relative links
(``../docs/glossary.md``) and paths (``../results``) mean the same from there. What was written
is recorded in ``workspace/.written.json`` (the hash of each copy as written). Standard library only.
"""

import hashlib
import json
from pathlib import Path

from pp_demo.output_paths import NOTEBOOKS

__all__ = ["WORKSPACE", "cleared", "prepare_workspace"]

WORKSPACE = Path("workspace")  # relative to the checkout, beside notebooks/
RECORD = ".written.json"


def cleared(text: str) -> str:
    """The notebook ``text`` with no outputs, execution counts or widget state: what a fresh
    kernel has not run yet. The cells' sources and ids are kept, so the copy reads the same."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb.get("metadata", {}).pop("widgets", None)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prepare_workspace(checkout: Path = Path(".")) -> list[str]:
    """Bring ``checkout/workspace/`` up to date with ``checkout/notebooks/``, as the module says;
    returns the lines to print (one per kept copy whose notebook changed, and one summary)."""
    source, target = checkout / NOTEBOOKS, checkout / WORKSPACE
    target.mkdir(exist_ok=True)
    record_file = target / RECORD
    record: dict[str, str] = json.loads(record_file.read_text(encoding="utf-8")) if record_file.is_file() else {}
    lines, written = [], 0
    for notebook in sorted(source.glob("[0-9]*.ipynb")):
        fresh = cleared(notebook.read_text(encoding="utf-8"))
        copy, last_written = target / notebook.name, record.get(notebook.name)
        if copy.is_file() and _hash(copy.read_text(encoding="utf-8")) != last_written:  # the attendee's now
            if last_written != _hash(fresh):
                lines.append(
                    f"kept your copy of {notebook.name}; the workbook's has changed since: "
                    f"delete {(WORKSPACE / notebook.name).as_posix()} and run make lab again to take it"
                )
            continue
        if not copy.is_file() or last_written != _hash(fresh):
            copy.write_text(fresh, encoding="utf-8")
            written += 1
        record[notebook.name] = _hash(fresh)
    record_file.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines.append(
        f"your working copy: {WORKSPACE.as_posix()}/ ({written} notebook(s) written, outputs cleared; "
        f"git ignores it, notebooks/ stays as the workbook stores it)"
    )
    return lines
