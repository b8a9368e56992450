"""The learner's path: the files a reader walks for ``build_model -> pipeline_logits ->
split_model`` on the reproduction batch, called as a notebook calls them (the public API), are at
most 4 and at most 785 lines all told (700, and the plan ``plan_run`` makes: the one checked door the
in-process loop and the ranks both take, and ``check_pad_id``, the pad id's one check; and
``pp_demo/bounds.py``, the one home of every bound, whose seed and counts the core checks); the core
imports nothing of the package but the error type and the bounds."""

import ast
import json
import subprocess
import sys
from pathlib import Path

from pp_demo import core

MOST_FILES, MOST_LINES = 4, 785

# a fresh interpreter, so nothing another test imported counts
_WALK = """
import json, sys
from pp_demo import REVIEW_TABLE, as_batch, build_model, pipeline_logits, split_model
model = build_model("llama")
ids, mask = as_batch(REVIEW_TABLE)
pipeline_logits(model, ids, mask, rule="count")
split_model(model, 2).logits(ids, mask)
files = {m.__file__ for name, m in list(sys.modules.items()) if name.split(".")[0] == "pp_demo"}
print(json.dumps(sorted(files)))
"""


def _walked() -> dict[str, int]:
    """``{file: lines}`` of every pp_demo module loaded or run on the path."""
    out = subprocess.run([sys.executable, "-c", _WALK], capture_output=True, text=True, check=True).stdout
    files = json.loads(out.splitlines()[-1])
    return {f: len(Path(f).read_text(encoding="utf-8").splitlines()) for f in files}


def test_the_learners_path_is_at_most_four_files_and_785_lines():
    walked = _walked()
    assert any(f.endswith("core.py") for f in walked)  # the walk reached the core at all
    assert len(walked) <= MOST_FILES, sorted(walked)
    assert sum(walked.values()) <= MOST_LINES, walked


def test_the_core_imports_nothing_of_the_package_but_the_error_type_and_the_bounds():
    with open(core.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert sorted(m for m in imported if m and m.split(".")[0] == "pp_demo") == ["pp_demo.bounds", "pp_demo.errors"]
