"""``python -m pp_demo colossalai-engine``: the bug and the change on ColossalAI's own engine.

Spawned here, the two ranks start once per tree (unpatched, the change, the change plus the
follow-up: ``verify-pr``'s variants of the 0.5.0 sdist; or ``installed``) and run every case.
Under ``torchrun --nproc-per-node 2 -m pp_demo colossalai-engine --tree T`` the two torchrun
processes are the ranks, for one tree. One progress line per case, then per case the familiar
``row matches model.forward: [...]`` line and the loss and gradient verdicts.
"""

import argparse
import functools
import json
import os
import pathlib
import sys
import threading
from typing import Any

from pp_demo import output_paths as outputs
from pp_demo.colossalai.engine.run import (
    MODES,
    PP_STYLES,
    batch_of,
    case_name,
    engine_cases,
    not_run,
    run_engine,
)
from pp_demo.colossalai.pull_request.sdists import CHANGE_FILES, FOLLOW_UP_FILES
from pp_demo.errors import BadInput
from pp_demo.pipeline.families import FAMILIES
from pp_demo.pooling.cases import row_text

__all__ = ["TREES", "RESULTS", "add_parser", "tree_folder", "verdict_lines", "summary_lines", "run_trees", "main"]

TREES = ("unpatched", "change", "change + follow-up", "installed")
# the committed run of every family, schedule, mode and sdist tree (notebook 06 reads it: two
# rank starts per tree take longer than a notebook cell may), found from the working directory
RESULTS = outputs.in_checkout(outputs.RESULTS / "colossalai_engine.json")
SDIST = "colossalai==0.5.0"


def tree_folder(tree: str) -> pathlib.Path | None:
    """The folder to put first on the path for ``tree`` (``None``: the installed package)."""
    if tree == "installed":
        return None
    from pp_demo.colossalai.pull_request.sdists import default_cache, variant_tree

    return variant_tree(SDIST, tree, default_cache(), os.environ.get("PP_DEMO_WHEELHOUSE") or "wheelhouse")


def _same(record: dict[str, Any], key: str, reference: str) -> bool:
    return bool(abs(record[key] - record[reference]) <= record["tolerance"])


def verdict_lines(record: dict[str, Any]) -> list[str]:
    """Two lines per case: where the rows match ``model.forward``; the loss and gradients."""
    if "cannot run" in record:
        return [f"{case_name(record):<32} cannot run on the plugin:", f"    {record['cannot run']}"]
    first = f"{case_name(record):<32} row matches model.forward: {record['matches']}"
    loss = "equal" if _same(record, "loss", "model.forward loss") else "differs"
    second = f"    loss {record['loss']:.6f} (model.forward {record['model.forward loss']:.6f}): {loss}"
    if record["largest gradient difference"] is not None:
        grads = "equal" if record["largest gradient difference"] <= record["tolerance"] else "differ"
        second += f"; gradients {grads} (up to {record['largest gradient difference']:.1e})"
    return [first, second]


def _cell(record: dict[str, Any]) -> str:
    rows = "".join("TF"[not m] for m in record["matches"])
    loss = "=" if _same(record, "loss", "model.forward loss") else "x"
    grads = "=" if record["largest gradient difference"] <= record["tolerance"] else "x"
    return f"{rows:<5}{loss:<5}{grads}"


def summary_lines(runs: dict[str, Any]) -> list[str]:
    """One line per family and schedule, one column per tree, from the training step's record
    (its logits are the inference run's too): rows matching model.forward (T/F), then the loss
    and the gradients, ``=`` equal to model.forward's within the tolerance, ``x`` not."""
    trees = list(runs)
    lines = [
        f"{'':<20}" + "".join(f"{t:<20}" for t in trees),
        f"{'family schedule':<20}" + f"{'rows loss grads':<20}" * len(trees),
    ]
    done = {
        t: {(r["family"], r["schedule"]): r for r in run["records"] if r["mode"] == "training"}
        for t, run in runs.items()
    }
    for key in done[trees[0]]:
        cells = [_cell(done[t][key]) if key in done[t] else "not run" for t in trees]
        lines.append(f"{' '.join(key):<20}" + "".join(f"{c:<20}" for c in cells))
    return [line.rstrip() for line in lines]


def _batch_lines(families: list[str]) -> list[str]:
    lines = []
    for kind in (CHANGE_FILES, FOLLOW_UP_FILES):
        chosen = [f for f in families if f in kind]
        if chosen:
            rows = ", ".join(row_text(r) for r in batch_of(chosen[0])[0].tolist())
            lines.append(f"batch of {', '.join(chosen)}: {rows}; pad id 0")
    return lines


def run_trees(args: argparse.Namespace, say: Any = print) -> dict[str, Any]:
    """Every tree's run, one start each: ``{tree: run_engine's result}``."""
    cases = engine_cases(args.family, args.schedule, args.mode, args.also_not_run)
    runs = {}
    for tree in args.tree:
        say(f"tree {tree}: starting two ranks for {len(cases)} cases")
        runs[tree] = run_engine(
            tree_folder(tree), cases, args.dtype, args.backend, case_timeout_s=args.case_timeout, progress=say
        )
    return runs


def _report(runs: dict[str, Any], args: argparse.Namespace) -> int:
    print()
    print(f"ColossalAI's engine (HybridParallelPlugin pp_size=2), two {args.backend} ranks, {args.dtype},")
    print("against model.forward (the reference)")
    for line in _batch_lines(args.family):
        print(line)
    for family in args.family:
        for schedule in args.schedule:
            why = not_run(family, schedule)
            if why:
                print(f"{'tried anyway' if args.also_not_run else 'not run'}: {family} {schedule}: {why}")
    failed = False
    for tree, run in runs.items():
        print(f"\ntree {tree}: colossalai imported from it: {run['colossalai.__file__ inside the tree']}")
        for record in run["records"]:
            for line in verdict_lines(record):
                print(line)
        if run["failure"]:
            failed = True
            print(f"stopped: {run['failure']}")
    return 1 if failed else 0


def _write(runs: dict[str, Any], out: str) -> None:
    path = pathlib.Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n")


def _under_torchrun(args: argparse.Namespace) -> int:
    """This process is one of torchrun's two ranks: one tree, the cases run here."""
    import torch
    import torch.distributed as dist

    from pp_demo.colossalai.engine.worker import prepare_colossalai, run_cases

    if len(args.tree) != 1:
        raise BadInput("under torchrun the ranks import one tree: pass one --tree")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)
    dist.init_process_group(args.backend)
    # rank 0 builds the tree in the cache (if it must) before the other rank looks for it
    folder = tree_folder(args.tree[0]) if rank == 0 else None
    dist.barrier()
    folder = folder if rank == 0 else tree_folder(args.tree[0])
    if folder is not None:
        sys.path.insert(0, str(folder))
    colossalai = prepare_colossalai(rank, world, args.backend, args.case_timeout)
    cases = engine_cases(args.family, args.schedule, args.mode, args.also_not_run)
    last = rank == world - 1
    imported = pathlib.Path(colossalai.__file__).resolve()
    inside = imported.is_relative_to(folder.resolve()) if folder else "site-packages" in str(imported)
    records: list[dict[str, Any]] = []

    def on_record(index: int, record: dict[str, Any]) -> None:
        records.append(record)
        print(f"[{index + 1}/{len(cases)}] {case_name(record)}: done", flush=True)

    # a watchdog per case: a rank that does not finish in time says so and exits
    for index, case in enumerate(cases):
        timer = threading.Timer(args.case_timeout, _give_up, (rank, case_name(case), args.case_timeout))
        timer.start()
        try:
            run_cases([case], args.dtype, rank, world, functools.partial(_renumbered, on_record, index))
        finally:
            timer.cancel()
    dist.destroy_process_group()
    if not last:
        return 0
    runs = {args.tree[0]: {"colossalai.__file__ inside the tree": inside, "records": records, "failure": None}}
    if args.out:
        _write(runs, args.out)
    return _report(runs, args)


def _renumbered(on_record: Any, index: int, _: int, record: dict[str, Any]) -> None:
    on_record(index, record)


def _give_up(rank: int, name: str, seconds: float) -> None:
    print(f"rank {rank}: case {name} did not finish within {seconds:g} s; stopping", file=sys.stderr, flush=True)
    os._exit(3)


def _check_before_the_run(args: argparse.Namespace) -> None:
    """What would fail only after minutes of ranks, refused first: where ``--out`` writes (and
    a record of more runs there), the case timeout, NCCL on a torch without it."""
    from pp_demo.bounds import seconds
    from pp_demo.output_paths import check_not_fewer, output_path

    seconds(args.case_timeout, "--case-timeout")
    if args.backend == "nccl":
        import torch.distributed as dist

        if not dist.is_nccl_available():
            raise BadInput("--backend nccl: this torch has no NCCL (a CPU build?); use --backend gloo")
    if args.out:
        args.out = str(output_path(args.out, RESULTS.name))
        runs = len(args.tree) * len(engine_cases(args.family, args.schedule, args.mode, args.also_not_run))
        check_not_fewer(pathlib.Path(args.out), "case records", runs, _records, args.force)


def _records(record: dict[str, Any]) -> int:
    return sum(len(run["records"]) for run in record.values())


def main(args: argparse.Namespace) -> int:
    from pp_demo.pipeline.launch import launched_by_torchrun

    _check_before_the_run(args)
    if launched_by_torchrun():
        return _under_torchrun(args)
    runs = run_trees(args, lambda line: print(line, flush=True))
    if args.out:
        _write(runs, args.out)
    return _report(runs, args)


def add_parser(jobs: Any) -> None:
    """The ``colossalai-engine`` subcommand, added to ``pp_demo.cli``'s parser."""
    engine = jobs.add_parser(
        "colossalai-engine",
        help="the bug and the change on ColossalAI's own engine (HybridParallelPlugin, two ranks)",
        description="Run ColossalAI 0.5.0's HybridParallelPlugin(pp_size=2) with Booster.execute_pipeline on "
        "two ranks, per tree of the 0.5.0 sdist, and compare logits, loss and gradients with "
        "model.forward. Needs ColossalAI (make colossalai).",
    )
    pooled = [f for f in FAMILIES if f in CHANGE_FILES + FOLLOW_UP_FILES]
    engine.add_argument(
        "--family",
        nargs="+",
        choices=pooled,
        default=list(CHANGE_FILES),
        metavar="FAMILY",
        help=f"families (default: %(default)s; supported: {', '.join(pooled)})",
    )
    engine.add_argument(
        "--tree",
        nargs="+",
        choices=TREES,
        default=["unpatched", "change"],
        metavar="TREE",
        help=f"ColossalAI trees, one rank start each (default: %(default)s; of: {', '.join(TREES)})",
    )
    engine.add_argument("--schedule", nargs="+", choices=PP_STYLES, default=list(PP_STYLES))
    engine.add_argument("--mode", nargs="+", choices=MODES, default=list(MODES))
    engine.add_argument(
        "--dtype",
        choices=["fp32", "bf16", "fp16"],
        default="fp32",
        help="fp16 training needs a GPU (ColossalAI's grad scaler)",
    )
    engine.add_argument(
        "--backend",
        choices=["gloo", "nccl"],
        default="gloo",
        help="gloo on the CPU (default); nccl needs a GPU per rank",
    )
    engine.add_argument(
        "--case-timeout",
        type=float,
        default=60.0,
        help="seconds a case may take before its ranks are stopped (default %(default)s)",
    )
    engine.add_argument(
        "--also-not-run",
        action="store_true",
        help="also run the family x schedule pairs ColossalAI 0.5.0 cannot run, to see how they fail",
    )
    engine.add_argument(
        "--out", default=None, help="also write every record to this JSON file (or colossalai_engine.json in a folder)"
    )
    engine.add_argument("--force", action="store_true", help="replace an --out file of more case records than this run")
    engine.set_defaults(run=main)
