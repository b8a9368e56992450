"""The stored notebooks are clean, executed, and follow the workbook's conventions.

Fast: reads the .ipynb files as JSON, starts no kernel. Strict nbval (``make test-notebooks``)
then re-runs them and compares outputs; this file catches what nbval would not report
clearly, or at all (a notebook stored without outputs is never compared by nbval).
"""

import json
import re

import pytest

from pp_demo.pooling.survey import PROJECTOR_WIDTH

MACHINE_PATHS = ("/root/", "/home/", "/tmp/", "/work/", "site-packages")
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
NOT_ATTEMPTED = re.compile(r"\[\d\d\.\d+\] not attempted yet\n?")


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _text(value):
    return "".join(value) if isinstance(value, list) else str(value)


def _code_cells(nb):
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"]


def _output_texts(output):
    """Every text an output carries; images are base64 and skipped."""
    if output["output_type"] == "stream":
        yield _text(output["text"])
    for mime, value in output.get("data", {}).items():
        if not mime.startswith("image/"):
            yield _text(value)


def test_there_are_notebooks(notebooks):
    assert notebooks, "no notebooks/[0-9]*.ipynb found"


@pytest.fixture
def notebook(notebook_path):
    return notebook_path.name, _load(notebook_path)


def test_is_a_valid_nbformat_4_notebook(notebook):
    name, nb = notebook
    assert nb["nbformat"] == 4, name
    assert all(cell["cell_type"] in ("code", "markdown", "raw") for cell in nb["cells"]), name


def test_code_cells_are_executed_once_in_order(notebook):
    name, nb = notebook
    counts = [cell.get("execution_count") for cell in _code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{name}: execution counts {counts}; rerun it top to bottom with `make notebooks`"
    )


def test_no_stderr_and_no_errors(notebook):
    name, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        for output in cell["outputs"]:
            assert output["output_type"] != "error", f"{name} code cell {i} stored an error"
            assert not (output["output_type"] == "stream" and output["name"] == "stderr"), (
                f"{name} code cell {i} wrote to stderr: {_text(output['text'])[:200]!r}"
            )


def test_outputs_hold_no_machine_paths_or_addresses(notebook):
    name, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        for output in cell["outputs"]:
            for text in _output_texts(output):
                for path in MACHINE_PATHS:
                    assert path not in text, f"{name} code cell {i} output shows {path!r}"
                assert not ADDRESS.search(text), (
                    f"{name} code cell {i} output shows a memory address: {ADDRESS.search(text).group()}"
                )


def test_no_per_cell_execution_timestamps(notebook):
    name, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        assert "execution" not in cell.get("metadata", {}), (
            f"{name} code cell {i} stores execution timestamps; regenerate with `make notebooks`"
        )


def test_no_cell_relies_on_a_trailing_semicolon(notebook):
    """Jupyter hides a cell's value after a trailing ``;`` but nbval's kernel shows it,
    so strict nbval fails the cell. Assign the value instead (``check`` returns nothing)."""
    name, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        lines = [line for line in _text(cell["source"]).splitlines() if line.strip()]
        assert not (lines and lines[-1].split("#")[0].rstrip().endswith(";")), (
            f"{name} code cell {i} ends with ';': {lines[-1]!r}"
        )


def test_opens_with_what_you_will_learn(notebook):
    name, nb = notebook
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and "What you will learn" in _text(first["source"]), name


def test_no_markdown_cell_repeats_a_bullet(notebook):
    """A bullet said twice in one cell is a merge's leftover, not emphasis: three notebooks'
    "What you will learn" lists once repeated a goal up to four times."""
    name, nb = notebook
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        bullets = [line for line in _text(cell["source"]).splitlines() if line.startswith("- ")]
        repeated = sorted({line for line in bullets if bullets.count(line) > 1})
        assert not repeated, f"{name} cell {i} repeats {repeated}"


def test_exercises_are_stored_unattempted(notebook):
    """Every ``check(`` cell is stored with its stub unfilled (no answer leaks into the
    notebook) and prints exactly its ``[xx.y] not attempted yet`` line."""
    name, nb = notebook
    check_cells = [cell for cell in _code_cells(nb) if "check(" in _text(cell["source"])]
    assert check_cells, f"{name} has no exercise (a cell calling check(...))"
    for cell in check_cells:
        stdout = "".join(
            _text(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream" and o["name"] == "stdout"
        )
        assert NOT_ATTEMPTED.fullmatch(stdout), (
            f"{name}: exercise cell {_text(cell['source'])!r} is stored with {stdout!r}"
        )
        assert "text/plain" not in str(cell["outputs"]), f"{name}: a check cell shows a value"


PROJECTOR_COLUMNS = PROJECTOR_WIDTH  # a stored text output a room can read off a projector


def test_text_outputs_fit_a_projector(notebook):
    name, nb = notebook
    too_wide = []
    for i, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            texts = [_text(output["text"])] if output["output_type"] == "stream" else []
            texts += [_text(output.get("data", {}).get("text/plain", ""))]
            width = max((len(line) for text in texts for line in text.splitlines()), default=0)
            if width > PROJECTOR_COLUMNS:
                too_wide.append(f"cell {i}: {width} characters")
    assert not too_wide, f"{name}: text outputs wider than {PROJECTOR_COLUMNS} characters: {too_wide}"
