"""Pointers that hold: every ``tests/...`` and ``pp_demo/...`` path the repository's text names
exists, and every ``file.py:LINE`` into ColossalAI says which tree it counts in.

Read: the notebooks (markdown, code and stored outputs), docs/*.md, README.md and the other
Markdown files, the Python files (docstrings and comments), the Makefile and the config files.
``results/`` is left out: a record keeps the names of the day it was written. The dotted
module paths (``pp_demo.MODULE``) have their own test, ``tests/repo/test_module_paths.py``.

A ColossalAI line number is any ``name.py:LINE`` (or ``name.py (LINE-LINE)``, ``name.py LINE``) whose file is not
one of this repository's: it counts lines in one of two trees, ColossalAI 0.5.0 or
colossalai-nightly 2025.7.12, and the block around it (its notebook cell, its paragraph, its
Python file) names which. Those in 0.5.0 are read in the installed ColossalAI 0.5.0, where the
line must hold what the text says it does (``SAYS``). The nightly's sdist is not part of the
offline set-up; its lines are checked for their tree only.
"""

import importlib.metadata
import importlib.util
import json
import re
from pathlib import Path

import pytest
from git_files import NO_GIT, tracked_files

REPO = Path(__file__).resolve().parents[2]
PATH = re.compile(r"(?<![\w./-])((?:tests|pp_demo)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*.])")
# name.py:443, name.py (433-435), `name.py` (443), `name.py` 443
LINE = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*\.py)`?(?::| \(| )(\d+)(?:-(\d+))?\b")
PLACEHOLDER = re.compile(r"NN|FOLDER|test_x|\.\.\.|\*")  # nbNN.py, FOLDER/test_x.py, 0002-..., *.py
TEXT = {".md", ".py", ".ipynb", ".cfg", ".toml", ".txt", ".yml", ".yaml", ".mk"}
TREES = ("0.5.0", "nightly")
# file names that are not ColossalAI's though no file of this repository has them
NOT_COLOSSALAI = {"broken_module.py"}  # a reader's module in a test of the checker's messages

# What each ColossalAI 0.5.0 line named in the text holds: (file within colossalai/, line) -> code.
SAYS = {
    ("pipeline/p2p.py", 159): "is_hccl_available",
    ("pipeline/p2p.py", 320): "req.wait()",  # the forward-only interleaved step waits here (rank 0)
    ("pipeline/p2p.py", 346): "req.wait()",  # (rank 1)
    ("pipeline/schedule/interleaved_pp.py", 20): "def _wait_p2p",
    ("pipeline/schedule/interleaved_pp.py", 314): "stage_indices",
    ("pipeline/schedule/interleaved_pp.py", 403): "self.forward_step",
    ("pipeline/schedule/one_f_one_b.py", 49): "overlap_p2p=False",
    ("pipeline/schedule/one_f_one_b.py", 267): "load_micro_batch",
    ("pipeline/schedule/_utils.py", 126): "model(**data",
    ("pipeline/stage_manager.py", 135): "is_interleave",
    ("shardformer/policies/opt.py", 55): "ATTN_IMPLEMENTATION",
    ("shardformer/policies/opt.py", 463): "is_last_stage",
    ("shardformer/policies/llama.py", 317): "stage_indices",
    ("shardformer/policies/qwen2.py", 337): "stage_indices",
    ("shardformer/policies/gpt2.py", 338): "stage_indices",
    ("shardformer/policies/mistral.py", 278): "stage_indices",
    ("amp/naive_amp/grad_scaler/dynamic_grad_scaler.py", 41): "device_count",
    # the first pooling line of each 0.5.0 forward (notebook 06), and the first changed line of
    # each hunk of the patches (notebook 09)
    **{(f"shardformer/modeling/{name}", line): "torch.ne(input_ids" for name, line in
       (("llama.py", 443), ("qwen2.py", 443), ("opt.py", 412))},
    **{(f"shardformer/modeling/{name}", line): "torch.eq(input_ids" for name, line in
       (("gpt2.py", 764), ("bloom.py", 488), ("falcon.py", 517), ("gptj.py", 427), ("mistral.py", 331))},
    **{(f"shardformer/modeling/{name}", line): "if no pad token found" for name, line in
       (("gpt2.py", 763), ("bloom.py", 487), ("falcon.py", 516), ("gptj.py", 426))},
}  # fmt: skip


TRACKED = tracked_files(REPO)
if TRACKED is None:  # what this file checks is git's list of files; the other tests run
    pytest.skip(NO_GIT, allow_module_level=True)


def _tracked() -> list[Path]:
    return [
        REPO / line
        for line in TRACKED or []
        if not line.startswith("results/") and (Path(line).suffix in TEXT or Path(line).name == "Makefile")
    ]


def _blocks(path: Path) -> list[str]:
    """The file as blocks a reader takes together: a notebook's cells (with their outputs), a
    Markdown file's sections (from one heading to the next), a Python or config file whole."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        blocks = []
        for cell in json.loads(text)["cells"]:
            outputs = [
                "".join(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", [])
            ]
            blocks.append("".join(cell["source"]) + "\n" + "\n".join(outputs))
        return blocks
    if path.suffix == ".md":
        return re.split(r"\n(?=#+ )", text)
    return [text]


def _all_blocks() -> list[tuple[str, str]]:
    return [(str(path.relative_to(REPO)), block) for path in _tracked() for block in _blocks(path)]


REPO_FILES = {path.name for path in _tracked()}


def test_every_tests_and_package_path_named_exists():
    named = {}
    for where, block in _all_blocks():
        for path in PATH.findall(block):
            if not PLACEHOLDER.search(path) and where != "tests/repo/test_pointers.py":
                named.setdefault(path.rstrip("/."), set()).add(where)
    assert len(named) > 30  # the pattern reads the files at all
    # a module may be named without its suffix (pp_demo/__init__)
    missing = {
        path: sorted(where)
        for path, where in sorted(named.items())
        if not ((REPO / path).exists() or (REPO / f"{path}.py").exists())
    }
    assert missing == {}


def _colossalai_lines() -> list[tuple[str, str, int, str]]:
    """``(where, file, line, block)`` for every ColossalAI line number in the text."""
    found = []
    for where, block in _all_blocks():
        if where == "tests/repo/test_pointers.py":
            continue
        for match in LINE.finditer(block):
            name = match[1]
            if name not in REPO_FILES and name not in NOT_COLOSSALAI:
                found.append((where, name, int(match[2]), block))
    return found


def test_every_colossalai_line_number_names_its_tree():
    lines = _colossalai_lines()
    assert len(lines) > 20
    untold = sorted({(where, f"{name}:{line}") for where, name, line, block in lines if not _trees(block)})
    assert untold == []


def _trees(block: str) -> set[str]:
    return {tree for tree in TREES if tree in block}


def _colossalai_050() -> Path:
    # found without importing it: importing ColossalAI starts its own machinery
    spec = importlib.util.find_spec("colossalai")
    if spec is None or spec.origin is None:
        pytest.skip("ColossalAI 0.5.0 is not installed (make colossalai): its lines cannot be read")
    version = importlib.metadata.version("colossalai")
    if version != "0.5.0":
        pytest.skip(f"the installed ColossalAI is {version}, not 0.5.0: its lines cannot be read")
    return Path(spec.origin).parent


def test_the_050_lines_hold_what_the_text_says():
    root = _colossalai_050()
    for (relative, line), code in SAYS.items():
        text = (root / relative).read_text().splitlines()
        assert code in text[line - 1], f"colossalai/{relative}:{line} is {text[line - 1].strip()!r}, not {code!r}"


def test_every_050_line_named_is_one_whose_content_is_checked():
    # a new line number in the text needs its entry in SAYS (or a tree that is not 0.5.0)
    checked = {(Path(relative).name, line) for relative, line in SAYS}
    only_050 = {
        (name, line)
        for _, name, line, block in _colossalai_lines()
        if _trees(block) == {"0.5.0"} and name != "qwen3.py"
    }
    assert sorted(only_050 - checked) == []
