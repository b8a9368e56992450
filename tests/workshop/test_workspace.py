"""``make lab`` opens a working copy: outputs cleared, the attendee's edits kept, git never asked."""

import json
import shutil
from pathlib import Path

from pp_demo.workshop.workspace import WORKSPACE, prepare_workspace

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "01_four_padding_rows.ipynb"  # its "Predict before you read on" has stored answers below it


def _checkout(tmp_path: Path) -> Path:
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, tmp_path / "notebooks" / NOTEBOOK)
    return tmp_path


def _outputs(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(len(c.get("outputs", [])) for c in cells)


def test_the_copy_has_no_output_so_nothing_answers_a_prediction(tmp_path):
    checkout = _checkout(tmp_path)
    assert _outputs(checkout / "notebooks" / NOTEBOOK) > 0  # the repository's copy stores them
    lines = prepare_workspace(checkout)
    copy = checkout / WORKSPACE / NOTEBOOK
    assert _outputs(copy) == 0
    source = json.loads((checkout / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    assert [c["source"] for c in json.loads(copy.read_text(encoding="utf-8"))["cells"]] == [
        c["source"] for c in source["cells"]
    ]
    assert "1 notebook(s) written" in lines[-1]
    # beside notebooks/: a relative link or path means the same from the copy
    assert (checkout / WORKSPACE).parent == (checkout / "notebooks").parent


def test_an_untouched_copy_follows_the_workbook_and_an_edited_one_is_kept(tmp_path):
    checkout = _checkout(tmp_path)
    prepare_workspace(checkout)
    copy, original = checkout / WORKSPACE / NOTEBOOK, checkout / "notebooks" / NOTEBOOK
    nb = json.loads(original.read_text(encoding="utf-8"))
    nb["cells"][0]["source"] = "# a new title, as after a git pull\n"
    original.write_text(json.dumps(nb), encoding="utf-8")
    prepare_workspace(checkout)
    assert "a new title" in copy.read_text(encoding="utf-8")  # untouched: it follows
    copy.write_text(copy.read_text(encoding="utf-8").replace("a new title", "my notes"), encoding="utf-8")
    nb["cells"][0]["source"] = "# another title\n"
    original.write_text(json.dumps(nb), encoding="utf-8")
    lines = prepare_workspace(checkout)
    assert "my notes" in copy.read_text(encoding="utf-8")  # the attendee's: never overwritten
    assert any(line.startswith(f"kept your copy of {NOTEBOOK}") and "delete" in line for line in lines)


def test_git_ignores_the_working_copy():
    assert "/workspace/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
