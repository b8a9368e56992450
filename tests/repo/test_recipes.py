"""docs/architecture.md's recipes, followed in a copy of the tree: the files a recipe had to
touch for the tests it names to pass are the files the page lists, and the count it states.

Each test copies the checkout (the files git knows), makes the recipe's edits as the page
words them, runs the tests the page names on the copy, and reads which files changed from the
copy's own git. The notebooks the page says to run again are exactly those that fail strict
nbval in the copy: their stored outputs no longer hold.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from git_files import NO_GIT, tracked_files

from pp_demo.workshop.gpu_check import NBVAL

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
COUNTS = re.compile(r"^Touches (\d+) source files?, (\d+) test files? and (\d+) notebooks?\b", re.M)
BULLET_PATH = re.compile(r"^- `((?:pp_demo|tools|tests|notebooks|docs)/[^`]+|README\.md)`", re.M)


def _recipe(title: str) -> tuple[tuple[int, int, int], set[str]]:
    """The counts a recipe states and the paths its bullets name."""
    text = PAGE.read_text(encoding="utf-8")
    body = re.search(rf"^### {title}\n(.*?)(?=^#{{2,3}} |\Z)", text, flags=re.M | re.S)[1]
    counts = COUNTS.search(body)
    assert counts, f"{title}: no 'Touches N source files, M test files and K notebooks.' line"
    return (int(counts[1]), int(counts[2]), int(counts[3])), set(BULLET_PATH.findall(body))


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def tree(tmp_path):
    """A copy of the checkout's files under git, so the recipe's edits show as changes."""
    listed = tracked_files(REPO, "--cached", "--others", "--exclude-standard")
    if listed is None:
        pytest.skip(NO_GIT)
    copy = tmp_path / "tree"
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        _git(copy, *args)
    return copy


def _edit(tree: Path, path: str, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` with ``new``."""
    text = (tree / path).read_text()
    assert text.count(old) == 1, f"{path}: the recipe's anchor {old!r} is not there once"
    (tree / path).write_text(text.replace(old, new))


def _add(tree: Path, path: str, after: str, new: str) -> None:
    """Insert ``new`` after the one occurrence of ``after`` in ``path``."""
    _edit(tree, path, after, after + new)


def _pytest(tree: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)


def _touched(tree: Path) -> set[str]:
    return {line[3:] for line in _git(tree, "status", "--porcelain").splitlines()}


def _check_against_page(tree: Path, title: str) -> None:
    (sources, tests, notebooks), listed = _recipe(title)
    touched = _touched(tree)
    page_notebooks = {p for p in listed if p.startswith("notebooks/")}
    rerun = listed - touched  # named, not edited: notebooks to run again, and nothing else
    assert touched <= listed and rerun <= page_notebooks, f"{title}: touched {sorted(touched)}, listed {sorted(listed)}"
    kinds = [{p for p in listed if p.startswith(prefix)} for prefix in (("pp_demo/", "tools/"), "tests/")]
    assert (sources, tests, notebooks) == (len(kinds[0]), len(kinds[1]), len(page_notebooks))
    # the notebooks whose stored outputs no longer hold are the ones the page says to run again
    ran = _pytest(tree, "-q", *NBVAL, "notebooks", timeout=600)
    failing = set(re.findall(r"^FAILED (notebooks/[^:]+\.ipynb)::", ran.stdout, flags=re.M))
    assert "passed" in ran.stdout and failing == rerun, ran.stdout[-1500:]


PHI3 = """
    Family("phi3", "Phi3ForSequenceClassification", "Phi3Config", _LLAMA_LIKE,
           body="model", layers="layers", final=("norm",)),"""


def test_add_a_family_as_the_page_says(tree):
    # a family ColossalAI has no pipeline forward for: its row, and None in the review table
    end = "\n]}\n# fmt: on\n\n\ndef get_family"
    _edit(tree, "pp_demo/core.py", end, PHI3 + end)
    gptj = '    "gptj": "first_pad_mod",\n'
    _edit(tree, "tests/review_table.py", gptj, gptj + '    "phi3": None,\n')
    ran = _pytest(
        tree,
        "tests/core/test_families.py",
        "tests/colossalai/pull_request/test_verify_pr.py::test_the_changed_files_are_history_that_agrees_with_the_families_table",
        "-m",
        "not slow",
        "-k",
        "phi3 or every_family or history",
        "-v",
    )
    assert ran.returncode == 0, ran.stdout[-2000:]
    phi3 = [line for line in ran.stdout.splitlines() if "phi3" in line and "PASSED" in line]
    assert len(phi3) == 2, ran.stdout[-2000:]  # its fix at every split, under default and eager attention
    _check_against_page(tree, "Add a family")


def test_add_a_schedule_as_the_page_says(tree):
    # torch's looped breadth-first schedule: two stages on each rank, like the interleaved one
    interleaved = '        ScheduleSpec("interleaved-1f1b", "Interleaved1F1B", stages_per_rank=2),\n'
    looped_bfs = '        ScheduleSpec("looped-bfs", "LoopedBFS", stages_per_rank=2),\n'
    _edit(tree, "pp_demo/ranks/schedules.py", interleaved, interleaved + looped_bfs)
    _edit(tree, "pp_demo/ranks/jobs.py", '"interleaved-1f1b"]', '"interleaved-1f1b", "looped-bfs"]')
    test = "tests/ranks/test_looped.py"
    _add(tree, test, "LOOPED: ScheduleInterleaved1F1B", ', "looped-bfs": ScheduleLoopedBFS')
    _edit(tree, test, "SCHEDULES.values()] == [1, 1, 2]", "SCHEDULES.values()] == [1, 1, 2, 2]")
    _edit(tree, test, "'interleaved-1f1b', got 'zb'", "'interleaved-1f1b', 'looped-bfs', got 'zb'")
    _edit(tree, test, "ScheduleInterleaved1F1B\n", "ScheduleInterleaved1F1B, ScheduleLoopedBFS\n")
    ran = _pytest(tree, "-q", test, "tests/ranks/test_schedules.py", "-m", "not slow", "-k", "not two_ranks")
    assert ran.returncode == 0, ran.stdout[-2000:]
    _check_against_page(tree, "Add a schedule")


ATTENDED_MAX = '''def attended_max(attention_mask: torch.Tensor) -> torch.Tensor:
    """The largest attended position (-1 where none is): class d, read with max, not argmax."""
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device).expand_as(attention_mask)
    return torch.where(attention_mask.bool(), positions, -1).max(-1).values


'''


def test_add_a_pooling_rule_as_the_page_says(tree):
    # another spelling of the mask rule (class d), not a core rule: the survey's class takes it
    registry = "@dataclass(frozen=True)\nclass Rule:"
    _edit(tree, "pp_demo/core.py", registry, ATTENDED_MAX + registry)
    known = '    Rule("known_lengths", known_lengths,'
    entry = '    Rule("attended_max", attended_max, _MASK, "attention mask, largest"),\n'
    _edit(tree, "pp_demo/core.py", known, entry + known)
    cumsum = '    "attended_cumsum":    [5,   3,   5,   3,   5,        0,     3],\n'
    by_hand = '    "attended_max":       [5,   3,   5,   3,   5,       -1,     3],\n'  # from its definition
    _edit(tree, "tests/core/test_rules.py", cumsum, cumsum + by_hand)
    _add(tree, "pp_demo/pooling/survey.py", '("attended_flip", "attended_cumsum"', ', "attended_max"')
    failure = "pp_demo/pooling/failure.py"  # never wrong against the mask; against forward as flip is
    _add(tree, failure, '("rightmost_attended", "attended_flip", "attended_cumsum"', ', "attended_max"')
    _edit(tree, failure, 'FailureCondition("attended_flip", "forward",', '*(FailureCondition(rule, "forward",')
    flip = '(*_MASK_RULE_VS_FORWARD[1], r"^p{2,}$"), plain=_EOS_AFTER_TEXT)'
    _add(tree, failure, flip, '\n      for rule in ("attended_flip", "attended_max"))')
    readings = "tests/pooling/test_failure_readings.py"  # both conditions, read again by hand: flip's
    _add(tree, readings, '("rightmost_attended", "attended_flip", "attended_cumsum"', ', "attended_max"')
    _edit(tree, readings, '    ("attended_flip", "forward"): (', '    **{(rule, "forward"): (')
    flip_reading = '        lambda s: _eos_after(s) or (set(s) == {"p"} and len(s) > 1),\n    ),\n'
    _edit(tree, readings, flip_reading, flip_reading[:-2] + '\n    for rule in ("attended_flip", "attended_max")},\n')
    _edit(tree, "tests/workshop/test_explore.py", "len(PADDED_RULES) == 7", "len(PADDED_RULES) == 8")
    _add(tree, "tests/pooling/test_survey.py", '        "attended_cumsum",\n', '        "attended_max",\n')
    ran = _pytest(
        tree, "-q", "tests/core/test_rules.py", "tests/pooling", "tests/workshop/test_explore.py", "-m", "not slow"
    )
    assert ran.returncode == 0, ran.stdout[-2000:]
    _check_against_page(tree, "Add a pooling rule")


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
    right = '    ("02.1", [2, 0]),'
    _edit(tree, judges, right, '    ("02.2", 3),\n' + right)
    wrong = '    ("02.1", [0], "row 2 [0,5,6,7,8,0] (mask [0,1,1,1,1,0]) is misjudged"),\n'
    _edit(tree, judges, wrong, wrong + '    ("02.2", 1, "the rightmost id"),\n    ("02.2", 2, "the rightmost id"),\n')
    shortcut = '    ("02.1", [0], "row 2 [0,5,6,7,8,0]"),'
    _edit(tree, judges, shortcut, '    ("02.2", "3", "the rightmost id"),  # the int as text\n' + shortcut)
    for tool in ("tools.episodes", "apply"), ("tools.guide",):  # make episodes, make guide
        made = subprocess.run([sys.executable, "-m", *tool], cwd=tree, capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr[-1000:]
    ran = _pytest(tree, "-q", "tests/exercises", "tests/repo/test_episodes.py", "tests/repo/test_notebooks_hygiene.py")
    assert ran.returncode == 0, ran.stdout[-2000:]
    _check_against_page(tree, "Add an exercise")
