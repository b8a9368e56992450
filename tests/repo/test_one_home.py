"""Each fact of the package is written once: a grep of ``pp_demo/`` finds one definition.

Issue 26 found these facts written in two to four places each; a copy that drifts is a
table that disagrees with the command line. The test reads the source, so it fails on a
second definition however it is spelled (an assignment, an annotated one, a ``def``).
"""

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCES = {path.relative_to(REPO).as_posix(): path.read_text() for path in sorted((REPO / "pp_demo").rglob("*.py"))}

# name -> the one module that defines it
HOMES = {
    "PADDED_RULES": "pp_demo/pooling/rules.py",
    "RIGHT": "pp_demo/pooling/padding_table.py",
    "WRONG": "pp_demo/pooling/padding_table.py",
    "NO_ANSWER": "pp_demo/pooling/padding_table.py",
    "mark": "pp_demo/pooling/padding_table.py",
    "rules_for": "pp_demo/pipeline/families.py",
    "REPRO_ROWS": "pp_demo/verify/compare.py",
    "REPRO_FAMILIES": "pp_demo/verify/compare.py",
    "parameter_copies": "pp_demo/pipeline/jobs.py",
    "micro_batch_loss": "pp_demo/pipeline/jobs.py",
    "accumulate": "pp_demo/pipeline/in_process.py",
    "train_steps": "pp_demo/pipeline/in_process.py",
}


def _binding(name: str) -> re.Pattern[str]:
    """A module-level binding of ``name``: ``NAME =``, ``NAME: T =``, ``A, NAME = ...``, ``def NAME(``
    (a method of the same name, like ``Verdict.mark``, is indented and is not a second home)."""
    return re.compile(rf"^(?:def {name}\(|(?:\w+\s*,\s*)*{name}\s*(?:,\s*\w+\s*)*(?::[^=\n]+)?=(?!=))", re.MULTILINE)


def _definitions(name: str) -> list[str]:
    pattern = _binding(name)
    return [path for path, text in SOURCES.items() for _ in pattern.finditer(text)]


def test_the_pattern_finds_each_spelling_of_a_definition():
    # the grep below is only as good as its pattern: try it on the spellings it must catch
    pattern = _binding("X")
    for line in ["X = 1", "X: tuple[str, ...] = ()", "A, X, B = 1, 2, 3", "def X(a):"]:
        assert pattern.search(line), line
    for line in ["if X == 1:", "f(X=1)", "Y = X", "    def X(self):", "XY = 1"]:
        assert not pattern.search(line), line


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_fact_is_defined_once_in_its_home(name):
    where = _definitions(name)
    assert where == [HOMES[name]], f"{name} is defined in {where}, expected once in {HOMES[name]}"


def test_the_padded_rules_are_chosen_in_one_place():
    # each copy spelled the choice out as this comprehension test on a rule's inputs
    spelled = [path for path, text in SOURCES.items() if '"cu_seqlens" not in rule.needs' in text]
    assert spelled == ["pp_demo/pooling/rules.py"]


def test_the_verdict_marks_are_written_in_one_place():
    # the marks themselves ("✓" "✗") appear as string literals in the padding table only
    literal = re.compile(r"[\"']✓[\"']|[\"']✗[\"']")
    assert [path for path, text in SOURCES.items() if literal.search(text)] == ["pp_demo/pooling/padding_table.py"]


def test_the_default_rules_of_a_family_are_chosen_in_one_place():
    # the default, "its ColossalAI 0.5.0 rule and the fix", is written once, in families
    spelled = [path for path, text in SOURCES.items() if re.search(r"colossalai_rule, FIX\]", text)]
    assert spelled == ["pp_demo/pipeline/families.py"]


def test_one_optimiser_loop_trains_in_a_process():
    # the ranks build an optimizer per stage (their engine runs the micro-batches), and the
    # engine run and the benchmark hand ColossalAI's booster one (its engine runs the step); in one process,
    # unpipelined or through the stages, training is in_process.train_steps
    optimizers = [path for path, text in SOURCES.items() for _ in re.finditer(r"torch\.optim\.\w+\(", text)]
    assert sorted(optimizers) == [
        "pp_demo/bench/colossalai_peer.py",
        "pp_demo/colossalai/engine_worker.py",
        "pp_demo/pipeline/in_process.py",
        "pp_demo/pipeline/on_rank.py",
    ]
    hand_rolled = [path for path, text in SOURCES.items() if "stages.last(*stages.first(" in text]
    assert hand_rolled == []  # a two-stage shortcut past the runner
