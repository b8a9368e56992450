"""tools/check_notebooks.py, the pre-commit hook on stored notebook outputs.

The fixtures are notebooks written by nbformat, as Jupyter writes them; the expected verdicts
come from what a fresh top-to-bottom run stores (counts 1..n, no stderr, no error).
"""

import pathlib

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import check_notebooks

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cell(source, count, *outputs):
    return new_code_cell(source, execution_count=count, outputs=list(outputs))


def _stdout(text):
    return new_output("stream", name="stdout", text=text)


def _fresh_run_cells():
    """What a fresh kernel stores: counts 1..3, a printed line, a value, an unrun empty cell."""
    return [
        new_markdown_cell("# What you will learn"),
        _cell("x = 1", 1),
        _cell("print(x)", 2, _stdout("1\n")),
        _cell("", None),
        _cell("x + 1", 3, new_output("execute_result", data={"text/plain": "2"}, execution_count=3)),
    ]


def _write(tmp_path, cells, name="nb.ipynb"):
    path = tmp_path / name
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_a_fresh_top_to_bottom_run_passes(tmp_path, capsys):
    path = _write(tmp_path, _fresh_run_cells())
    assert check_notebooks.check_file(path) == []
    assert check_notebooks.main([str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_a_gap_in_the_counts_is_refused(tmp_path, capsys):
    cells = _fresh_run_cells()
    cells[2].execution_count = 3  # the second code cell was run twice
    cells[4].execution_count = 4
    cells[4].outputs[0].execution_count = 4
    path = _write(tmp_path, cells)
    assert check_notebooks.check_file(path) == [f"{path}: code cell 2: execution count 3, expected 2"]
    assert check_notebooks.main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: code cell 2: execution count 3, expected 2"
    assert out[-1].startswith("1 problem(s)") and "make notebooks" in out[-1]


@pytest.mark.parametrize("counts", [[2, 1, 3], [None, None, None], [1, 2, 2]])
def test_counts_out_of_order_unrun_or_repeated_are_refused(tmp_path, counts):
    cells = [_cell(f"y = {i}", count) for i, count in enumerate(counts)]
    problems = check_notebooks.check_file(_write(tmp_path, cells))
    assert problems, counts
    assert all("execution count" in problem for problem in problems)


def test_stderr_is_refused(tmp_path):
    cells = _fresh_run_cells()
    cells[2].outputs.append(new_output("stream", name="stderr", text="UserWarning: careful\nmore\n"))
    problems = check_notebooks.check_file(_write(tmp_path, cells))
    assert len(problems) == 1
    assert "code cell 2: wrote to stderr: 'UserWarning: careful'" in problems[0]


def test_an_error_output_is_refused(tmp_path):
    cells = _fresh_run_cells()
    cells[1].outputs.append(new_output("error", ename="ValueError", evalue="bad row", traceback=[]))
    problems = check_notebooks.check_file(_write(tmp_path, cells))
    assert len(problems) == 1
    assert "code cell 1: stored an error (ValueError: bad row)" in problems[0]


def test_a_result_counted_apart_from_its_cell_is_refused(tmp_path):
    cells = _fresh_run_cells()
    cells[4].outputs[0].execution_count = 7
    problems = check_notebooks.check_file(_write(tmp_path, cells))
    assert len(problems) == 1 and "code cell 4: result counted 7, cell counted 3" in problems[0]


def test_an_empty_cell_with_outputs_is_refused(tmp_path):
    cells = _fresh_run_cells()
    cells[3].outputs.append(_stdout("left over\n"))
    problems = check_notebooks.check_file(_write(tmp_path, cells))
    assert len(problems) == 1 and "code cell 3: empty" in problems[0]


def test_a_file_that_is_not_a_notebook_is_one_line(tmp_path, capsys):
    path = tmp_path / "broken.ipynb"
    path.write_text("{ not json")
    assert check_notebooks.main([str(path), str(tmp_path / "missing.ipynb")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}: cannot read it as a notebook")
    assert out[1].startswith(f"{tmp_path / 'missing.ipynb'}: cannot read it as a notebook")
    assert out[2].startswith("2 problem(s)")


def test_every_problem_of_a_file_is_reported(tmp_path):
    cells = _fresh_run_cells()
    cells[1].outputs.append(new_output("error", ename="KeyError", evalue="'x'", traceback=[]))
    cells[2].execution_count = 5  # counts 1, 5, 3: two cells out of order, and the error
    path = _write(tmp_path, cells)
    assert check_notebooks.check_file(path) == [
        f"{path}: code cell 1: stored an error (KeyError: 'x')",
        f"{path}: code cell 2: execution count 5, expected 2",
        f"{path}: code cell 4: execution count 3, expected 6",
    ]


def test_the_repository_notebooks_pass():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    assert check_notebooks.main([str(path) for path in notebooks]) == 0
