"""``python -m pp_demo colossalai-engine``: the bug and the change on ColossalAI's own engine.

Spawned here, the two ranks start once per tree (unpatched, the change, the change plus the
follow-up: ``verify-pr``'s variants of the 0.5.0 sdist; or ``installed``) and run every case.
Under ``torchrun --nproc-per-node 2 -m pp_demo colossalai-engine --tree T`` the two torchrun
processes are the ranks, for one tree. One progress line per case, then per case the familiar
``row matches model.forward: [...]`` line and the loss and gradient verdicts.
"""

import argparse
import os
import pathlib
import sys
import threading
from typing import Any

import torch
import torch.distributed as dist

from pp_demo import bounds, output_paths
from pp_demo.errors import BadInput
from pp_demo.instruments.engine.run import batch_of, engine_cases, not_run, run_engine
from pp_demo.instruments.pull_request.sdists import CHANGE_FILES, FOLLOW_UP_FILES, default_cache, variant_tree
from pp_demo.pooling.padding_table import row_text
from pp_demo.records.engine import RESULTS, case_name, verdict_lines
from pp_demo.silent_imports import installed

__all__ = ["TREES", "tree_folder", "run_trees", "main"]

TREES = ("unpatched", "change", "change + follow-up", "installed")
SDIST = "colossalai==0.5.0"


def tree_folder(tree: str) -> pathlib.Path | None:
    """The folder to put first on the path for ``tree`` (``None``: the installed package)."""
    if tree == "installed":
        return None
    return variant_tree(SDIST, tree, default_cache(), os.environ.get("PP_DEMO_WHEELHOUSE") or "wheelhouse")


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
    if args.out:
        output_paths.write_json(pathlib.Path(args.out), runs)
    engine = f"ColossalAI's engine (HybridParallelPlugin pp_size=2), two {args.backend} ranks, {args.dtype},"
    print("", engine, "against model.forward (the reference)", *_batch_lines(args.family), sep="\n")
    for family in args.family:
        for schedule in args.schedule:
            why = not_run(family, schedule)
            if why:
                print(f"{'tried anyway' if args.also_not_run else 'not run'}: {family} {schedule}: {why}")
    for tree, run in runs.items():
        print(f"\ntree {tree}: colossalai imported from it: {run['colossalai.__file__ inside the tree']}")
        for record in run["records"]:
            print("\n".join(verdict_lines(record)))
        if run["failure"]:
            print(f"stopped: {run['failure']}")
    return 1 if any(run["failure"] for run in runs.values()) else 0


def _under_torchrun(args: argparse.Namespace) -> int:
    """This process is one of torchrun's two ranks: one tree, the cases run here."""
    from pp_demo.instruments.engine.worker import prepare_colossalai, run_cases

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
    imported = pathlib.Path(colossalai.__file__).resolve()
    inside = imported.is_relative_to(folder.resolve()) if folder else "site-packages" in str(imported)
    records: list[dict[str, Any]] = []

    def on_record(_: int, record: dict[str, Any]) -> None:  # the last rank has a record of every case
        records.append(record)
        print(f"[{len(records)}/{len(cases)}] {case_name(record)}: done", flush=True)

    # a watchdog per case: a rank that does not finish in time says so and exits
    for case in cases:
        timer = threading.Timer(args.case_timeout, _give_up, (rank, case_name(case), args.case_timeout))
        timer.start()
        try:
            run_cases([case], args.dtype, rank, world, on_record)
        finally:
            timer.cancel()
    dist.destroy_process_group()
    if rank != world - 1:  # the last rank reports
        return 0
    runs = {args.tree[0]: {"colossalai.__file__ inside the tree": inside, "records": records, "failure": None}}
    return _report(runs, args)


def _give_up(rank: int, name: str, seconds: float) -> None:
    print(f"rank {rank}: case {name} did not finish within {seconds:g} s; stopping", file=sys.stderr, flush=True)
    os._exit(3)


def _check_before_the_run(args: argparse.Namespace) -> None:
    """What would fail after minutes of ranks, refused first: ``--out``, the timeout, NCCL, a tree that
    is not installed, and fp16 training without a GPU (ColossalAI's grad scaler asks the accelerator for
    its devices: on a CPU every case would end in its internal RuntimeError)."""
    bounds.seconds(args.case_timeout, "--case-timeout")
    if args.backend == "nccl" and not dist.is_nccl_available():
        raise BadInput("--backend nccl: this torch has no NCCL (a CPU build?); use --backend gloo")
    if "installed" in args.tree and not installed("colossalai"):
        raise BadInput(
            "--tree installed: ColossalAI is not installed in this environment; run `make colossalai` first, "
            "or choose the 0.5.0 sdist's trees (--tree unpatched change)"
        )
    if args.dtype == "fp16" and "training" in args.mode and not torch.cuda.is_available():
        raise BadInput(
            "--dtype fp16 --mode training needs a GPU (ColossalAI's fp16 grad scaler does not run on a CPU): "
            "use --dtype bf16 (or fp32), --mode inference, or a machine with a GPU"
        )
    if args.out:
        args.out = str(output_paths.output_path(args.out, RESULTS.name))
        runs = len(args.tree) * len(engine_cases(args.family, args.schedule, args.mode, args.also_not_run))
        output_paths.check_not_fewer(pathlib.Path(args.out), "case records", runs, _records, args.force)


def _records(record: dict[str, Any]) -> int:
    return sum(len(run["records"]) for run in record.values())


def main(args: argparse.Namespace) -> int:
    from pp_demo.ranks.torchrun_env import is_torchrun_rank

    _check_before_the_run(args)
    if is_torchrun_rank():
        return _under_torchrun(args)
    runs = run_trees(args, lambda line: print(line, flush=True))
    return _report(runs, args)
