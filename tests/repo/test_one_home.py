"""Each fact of the package is written once: no public name is defined in two of its modules.

A copy that drifts is a table that disagrees with the command line, and one name with two
meanings (three ``ATTENTION`` tables once) is read as one fact. The test reads every module's
top-level statements, so it finds a second definition however it is spelled (an assignment, an
annotated one, a tuple of names, a ``def`` or a ``class``) without a list of names to look for;
an import is not a definition. Private names (``_x``) are their module's own business.
"""

import ast
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCES = {path.relative_to(REPO).as_posix(): path.read_text() for path in sorted((REPO / "pp_demo").rglob("*.py"))}

# name -> why it is deliberately defined in each of these modules
DELIBERATE = {
    "main": "each console script's and each worker's entry point, run by its module's name",
    "Outcome": "what one checker call did (verify/checker/worker.py) vs. one gpu-check step's result",
    "Step": "a training step of a job (pipeline/jobs.py) vs. one step of gpu-check's plan",
    "Forward": "a model's forward in one process (pipeline) vs. a ColossalAI forward taking the model",
    "run_check": "the handlers of two commands: the checker and gpu-check",
    "start_ranks": "the doctor's two-rank probe vs. the ColossalAI engine's ranks",
    "summary_lines": "each record's own summary: the benchmark's and the engine run's",
    "MODES": "bench/ and the engine run the same two modes; bench/ may import the engine's (reworked on its own)",
    "free_port": "the doctor's runs without torch, on any Python; the ranks' (pipeline/launch.py) needs torch",
    "RESULTS": "output_paths' is the folder; records/engine.py's and records/bench.py's each its record",
}


def _defined(tree: ast.Module) -> set[str]:
    """The names a module's top-level statements bind, imports left out."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return {n for n in names if not n.startswith("_")}


def _homes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path, text in SOURCES.items():
        for name in _defined(ast.parse(text)):
            found.setdefault(name, []).append(path)
    return found


def test_the_reader_finds_each_spelling_of_a_definition_and_no_import():
    spellings = ["X = 1", "Y: int = 2", "A, (B, C) = 1, (2, 3)", "def f(): pass", "class K: pass"]
    not_definitions = ["import os", "from m import Z", "_p = 1", "if X:\n    W = 1", "print(V := 1)"]
    tree = ast.parse("\n".join(spellings + not_definitions))
    assert _defined(tree) == {"X", "Y", "A", "B", "C", "f", "K"}


def test_no_public_name_is_defined_in_two_modules_unless_deliberate():
    twice = {name: where for name, where in sorted(_homes().items()) if len(where) > 1}
    assert len(_homes()) > 300  # the reader reads the package at all
    assert {name: where for name, where in twice.items() if name not in DELIBERATE} == {}


def test_each_deliberate_name_is_still_defined_twice():
    # an entry whose duplicate is gone is a stale excuse
    assert sorted(name for name in DELIBERATE if len(_homes().get(name, [])) < 2) == []


def test_the_padded_rules_are_chosen_in_one_place():
    # each copy spelled the choice out as this comprehension test on a rule's inputs
    spelled = [path for path, text in SOURCES.items() if '"cu_seqlens" not in rule.needs' in text]
    assert spelled == ["pp_demo/pooling/positions.py"]


def test_the_verdict_marks_are_written_in_one_place():
    # the marks themselves ("✓" "✗") appear as string literals in the padding table only
    literal = re.compile(r"[\"']✓[\"']|[\"']✗[\"']")
    assert [path for path, text in SOURCES.items() if literal.search(text)] == ["pp_demo/pooling/padding_table.py"]


def test_the_default_rules_of_a_family_are_chosen_in_one_place():
    # the default, "its ColossalAI 0.5.0 rule and the fix", is written once, beside the reproduction
    spelled = [path for path, text in SOURCES.items() if re.search(r"colossalai(_rule)?, FIX\]", text)]
    assert spelled == ["pp_demo/verify/compare.py"]


def test_one_optimiser_loop_trains_in_a_process():
    # the ranks build an optimizer per stage (their engine runs the micro-batches), the
    # engine run and the benchmark hand ColossalAI's booster one (its engine runs the step), and
    # DeepSpeed's ranks hand its engine one (deepspeed/on_rank.py); in one process,
    # unpipelined or through the stages, training is in_process.train_steps
    optimizers = [path for path, text in SOURCES.items() for _ in re.finditer(r"torch\.optim\.\w+\(", text)]
    assert sorted(optimizers) == [
        "pp_demo/deepspeed/on_rank.py",
        "pp_demo/instruments/bench/colossalai_peer.py",
        "pp_demo/instruments/engine/worker.py",
        "pp_demo/ranks/in_process.py",
        "pp_demo/ranks/on_rank.py",
    ]
    hand_rolled = [path for path, text in SOURCES.items() if "stages.last(stages.first(" in text]
    assert hand_rolled == []  # a two-stage shortcut past the runner
