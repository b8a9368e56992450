"""``python -m pp_demo verify-pr``: the pull request's claims judged on ColossalAI's own source.

For each sdist (0.5.0 and the nightly with qwen3.py) the variants of ``pull_request.sdists`` are
built in the cache and one worker process runs them all (``pull_request.worker``), the two workers
side by side; ``pull_request.claims`` judges what they saw. The fifth claim, the multi-stage
sentence, is judged on ColossalAI's own engine (two ranks per tree of 0.5.0, ``engine.claim``).
The table goes to stdout, everything seen to ``results/verify_pr.json`` (no times, no paths: a
rerun writes the same file). Exit 0 only when every row is verified (or with its documented difference).
"""

import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile
from typing import Any

from pp_demo.errors import BadInput
from pp_demo.instruments.engine.claim import judge_engine
from pp_demo.instruments.engine.run import engine_cases, run_engine, start_python
from pp_demo.instruments.pull_request import worker
from pp_demo.instruments.pull_request.claims import NOT_AS_STATED, VERIFIED, claim_row, judge_all
from pp_demo.instruments.pull_request.sdists import CHANGE_FILES, SDISTS, VARIANTS, NoSdist, default_cache, variant_tree
from pp_demo.output_paths import check_folder_writable, output_path, write_json
from pp_demo.pooling.padding_table import row_text
from pp_demo.records.engine import case_name
from pp_demo.records.pull_request import claim_batches, format_verdicts

__all__ = ["run_workers", "run_engine_trees", "verify_pr", "main"]

TITLE = "[shardformer]: fix pooled token for left-padded inputs in pipeline sequence classification"


def _start_worker(
    stem: str, trees: dict[str, pathlib.Path], folder: pathlib.Path
) -> tuple[subprocess.Popen[str], pathlib.Path]:
    job, out = folder / f"{stem}.job.json", folder / f"{stem}.out.json"
    job.write_text(json.dumps({"sdist": stem, "trees": {v: str(t) for v, t in trees.items()}}))
    first = next(iter(trees.values()))  # the worker imports the first variant's tree first
    pipes: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True}
    return start_python(worker.__name__, first, str(job), str(out), **pipes), out


def _progress(line: str) -> None:
    print(f"verify-pr: {line}", file=sys.stderr, flush=True)  # stdout keeps the table alone


def run_workers(cache: pathlib.Path, wheelhouse: str | None = None) -> dict[str, Any]:
    """``{sdist stem: the worker's result}`` for both sdists, every variant."""
    trees: dict[str, dict[str, pathlib.Path]] = {stem: {} for stem in SDISTS.values()}
    for (req, stem), v in itertools.product(SDISTS.items(), VARIANTS):
        trees[stem][v] = variant_tree(req, v, cache, wheelhouse)
        _progress(f"{stem}, variant {v}: tree ready")
    with tempfile.TemporaryDirectory() as folder:
        started = {stem: _start_worker(stem, t, pathlib.Path(folder)) for stem, t in trees.items()}
        _progress(f"running the {len(VARIANTS)} variants of each sdist, one worker per sdist (a few minutes)")
        results = {}
        for stem, (process, out) in started.items():
            _, errors = process.communicate()
            _progress(f"{stem}: every variant run")
            if process.returncode != 0:
                last = (errors.strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"the worker for {stem} failed: {last}")
            results[stem] = json.loads(out.read_text())
    return results


def _compact(variant: dict[str, Any]) -> dict[str, Any]:
    """A variant's rows as short strings: per row the positions its logits equal, ``5 3 0|1 -``
    (``|`` between tied positions, ``-`` for none), and whether they match as ``TTTF``."""
    families = variant.pop("families")
    variant["pooled"] = {
        f: {b: " ".join("|".join(map(str, c)) or "-" for c in x["pooled"]) for b, x in bs.items()}
        for f, bs in families.items()
    }
    variant["matches model.forward"] = {
        f: {b: "".join("TF"[not m] for m in x["matches"]) for b, x in bs.items()} for f, bs in families.items()
    }
    return variant


def _imports_row(stem: str, variants: dict[str, Any]) -> dict[str, str]:
    inside = all(v["colossalai.__file__ inside the tree"] for v in variants.values())
    versions = sorted({v["colossalai.__version__"] for v in variants.values()})
    ran = f"{len(variants)} variants in one process, PYTHONPATH / sys.path first"
    seen = f"colossalai.__file__ inside the variant's tree every time: {inside}; version {', '.join(versions)}"
    return claim_row("each variant imported from its own tree", stem, ran, seen, VERIFIED if inside else NOT_AS_STATED)


ENGINE_SDIST = "colossalai==0.5.0"
ENGINE_TREES = ("unpatched", "change", "change + follow-up")


def run_engine_trees(cache: pathlib.Path, wheelhouse: str | None = None) -> dict[str, Any]:
    """The fifth claim's evidence: the pull request's three families on ColossalAI's own engine
    (``pp_demo.instruments.engine.run``), both schedules, inference and training, per tree of 0.5.0."""
    cases = engine_cases(CHANGE_FILES)
    runs = {}
    for tree in ENGINE_TREES:
        _progress(f"ColossalAI's engine on the {tree} tree, {len(cases)} cases")
        runs[tree] = run_engine(variant_tree(ENGINE_SDIST, tree, cache, wheelhouse), cases)
    return runs


def _engine_summary(runs: dict[str, Any]) -> dict[str, Any]:
    """Per tree and case: rows matching model.forward (``TF``), loss and gradients equal or not."""

    def one(record: dict[str, Any]) -> str:
        if "cannot run" in record:
            return f"cannot run: {record['cannot run']}"
        rows = "".join("TF"[not m] for m in record["matches"])
        loss = abs(record["loss"] - record["model.forward loss"]) <= record["tolerance"]
        grads = record["largest gradient difference"]
        text = f"rows {rows}, loss {'equal' if loss else 'differs'}"
        return text + ("" if grads is None else f", gradients {'equal' if grads <= record['tolerance'] else 'differ'}")

    return {
        tree: {
            "colossalai.__file__ inside the tree": run["colossalai.__file__ inside the tree"],
            "failure": run["failure"],
            "cases": {case_name(r): one(r) for r in run["records"]},
        }
        for tree, run in runs.items()
    }


def verify_pr(cache: pathlib.Path, wheelhouse: str | None = None) -> dict[str, Any]:
    """Everything verify-pr records, as written to ``results/verify_pr.json``."""
    data = claim_batches()
    results = run_workers(cache, wheelhouse)
    engine_runs = run_engine_trees(cache, wheelhouse)
    claims, sdists = [judge_engine(SDISTS[ENGINE_SDIST], engine_runs)], {}
    for stem, result in results.items():
        fams = {v: x["families"] for v, x in result["variants"].items()}
        claims += [_imports_row(stem, result["variants"])] + judge_all(stem, fams, data)
        sdists[stem] = {v: _compact(x) for v, x in result["variants"].items()}
    claims.sort(key=lambda row: row["claim"])
    patches = {name: [patch[0] for patch in spec] for name, spec in VARIANTS.items()}
    rows = {b: [row_text(r) for r in ids.tolist()] for b, (ids, _) in data.items()}
    return {
        "pull_request": TITLE,
        "claims": claims,
        "variants": patches,
        "batches": rows,
        "sdists": sdists,
        "engine": _engine_summary(engine_runs),
    }


def _checked_paths(
    cache: str | None, wheelhouse: str | None, out: str
) -> tuple[pathlib.Path, str, pathlib.Path | None]:
    """Cache, wheelhouse and record path, refused in one line before minutes of work."""
    folder = pathlib.Path(cache) if cache else default_cache()
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"--cache {folder} is a file: give a folder for the sdists and patched trees")
    if not (folder / "trees").is_dir():  # a filled read-only cache still works
        try:
            check_folder_writable(folder, "--cache")
        except BadInput as error:
            raise BadInput(f"{error}: it holds no patched trees yet, so it must take files") from None
    if wheelhouse and not pathlib.Path(wheelhouse).is_dir():
        raise BadInput(f"--wheelhouse {wheelhouse} is not a folder")
    wheels = wheelhouse or os.environ.get("PP_DEMO_WHEELHOUSE") or "wheelhouse"
    return folder, wheels, output_path(out, "verify_pr.json") if out else None


def main(cache: str | None = None, wheelhouse: str | None = None, out: str = "results/verify_pr.json") -> int:
    folder, wheels, record_path = _checked_paths(cache, wheelhouse, out)
    try:
        record = verify_pr(folder, wheels)
    except (NoSdist, RuntimeError) as error:
        print(f"verify-pr: {error}", file=sys.stderr)
        return 2
    print(format_verdicts(record))
    if record_path is not None:
        write_json(record_path, record)
        print(f"wrote {record_path}", file=sys.stderr)
    return 0 if all(row["verdict"] != NOT_AS_STATED for row in record["claims"]) else 1
