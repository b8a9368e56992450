"""docs/architecture.md's recipe "Add an exercise", followed in a copy of the tree."""

import json
import subprocess
import sys

import pytest
from recipe_tree import check_against_page, edit, run_pytest

# each recipe runs every notebook in its copy: over a minute on 2 cores
pytestmark = pytest.mark.slow


EXERCISE = """

@register(
    "02.2",
    "On the row [0,0,5,6] (pad id 0), which position does the last stage with the fix pool?",
    solution=3,
    why="the rightmost id that is not the pad id is the 6, at position 3",
    wrong=(wrong_answer(1, "the count rule's position: the padding comes first"),),
)
def _judge_fix_position(position: object) -> str | None:
    if position == 3:
        return None
    return "on [0,0,5,6] the fix looks for the rightmost id that is not the pad id; count positions from 0"
"""


def _exercise_cells(notebook: dict) -> None:
    """The page's two cells (and the question above them), stored unfilled, before the last cell."""
    count = max(c.get("execution_count") or 0 for c in notebook["cells"])
    question = {
        "cell_type": "markdown",
        "id": "recipe-q",
        "metadata": {},
        "source": ["**02.2** Where does the fix pool on [0,0,5,6]?"],
    }
    stub = {"cell_type": "code", "execution_count": count + 1, "id": "recipe-stub", "metadata": {}, "outputs": []}
    stub["source"] = ["answer = ...  # an int"]
    check = {"cell_type": "code", "execution_count": count + 2, "id": "recipe-check", "metadata": {}}
    check["source"] = ['check("02.2", answer)']
    check["outputs"] = [{"name": "stdout", "output_type": "stream", "text": ["[02.2] not attempted yet\n"]}]
    notebook["cells"][-1:-1] = [question, stub, check]


def test_add_an_exercise_as_the_page_says(tree):
    with (tree / "pp_demo/exercises/nb02.py").open("a") as module:
        module.write(EXERCISE)
    path = tree / "notebooks/02_two_stage_pipeline.ipynb"
    notebook = json.loads(path.read_text())
    _exercise_cells(notebook)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    judges = "tests/exercises/test_exercise_judges.py"  # a right answer, two wrong ones, a shortcut
    right = '    ("02.1", [3, 0]),'
    edit(tree, judges, right, '    ("02.2", 3),\n' + right)
    wrong = (
        '    ("02.1", [], "rows like [0,21,22,23,24,25,26] (mask [0,1,1,1,1,1,1]), '
        'whose logits a mask of ones changes"),\n'
    )
    edit(tree, judges, wrong, wrong + '    ("02.2", 1, "the rightmost id"),\n    ("02.2", 2, "the rightmost id"),\n')
    shortcut = (
        '    ("02.1", [0, 2], "rows like [0,21,22,23,24,25,26] (mask [1,1,1,1,1,1,1])"),'
        "  # the rows that start with a pad"
    )
    edit(tree, judges, shortcut, '    ("02.2", "3", "the rightmost id"),  # the int as text\n' + shortcut)
    for tool in ("tools.episodes", "apply"), ("tools.guide",):  # make episodes, make guide
        made = subprocess.run([sys.executable, "-m", *tool], cwd=tree, capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr[-1000:]
    named = ("tests/exercises", "tests/repo/test_episodes.py", "tests/repo/test_notebooks_hygiene.py")
    ran = run_pytest(tree, "-q", *named)
    assert ran.returncode == 0, ran.stdout[-2000:]
    check_against_page(tree, "Add an exercise")
