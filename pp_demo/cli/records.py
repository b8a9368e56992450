"""The commands that run for minutes and write a record: ``bench``, ``train-study``, ``verify-pr``,
``colossalai-engine``. Where they write is checked before the work (``pp_demo.output_paths``).
With them, ``pipeline-speed``: a measurement too, printed only."""

import argparse
from collections.abc import Callable
from typing import Any

from pp_demo.bounds import count_value, seconds
from pp_demo.cli.options import add, count
from pp_demo.core import FAMILIES

# The instruments (pp_demo.instruments) and what writes their records are imported inside their
# jobs' handlers and options only: `reproduce` and the other jobs never load them.


def _interruptible(work: Callable[[], Any]) -> Any:
    """``work()``, whose processes (ranks, the bench's one-process runs) come from the fork
    server: it and they ignore Ctrl-C (``pp_demo.ranks.fork_server_signals``), so only
    this process is told, and stops them here; ``main`` then says so in one line."""
    import multiprocessing

    from pp_demo.ranks.launch import prepare_fork_server

    prepare_fork_server()
    try:
        return work()
    except KeyboardInterrupt:
        for child in multiprocessing.active_children():
            child.kill()
            child.join()
        raise


def _bench(args: argparse.Namespace) -> int:
    from pp_demo.figures.bench import draw_bench
    from pp_demo.instruments.bench import BenchSize, check_bench, format_bench, run_bench
    from pp_demo.instruments.bench.files import bench_files, timed_runs
    from pp_demo.instruments.bench.steadiness import steadiness
    from pp_demo.output_paths import write_json
    from pp_demo.records.bench import RESULTS

    size = BenchSize(hidden=args.hidden, layers=args.layers, seq=args.seq, batch=args.batch)
    check_bench(size, tuple(args.stages), tuple(args.micro_batches), args.warmup)
    if args.wait is not None:  # before the first line: a bad --wait is the one line said
        seconds(args.wait, "--wait", zero=True)
    runs = timed_runs(args.stages, args.micro_batches, args.repeats)
    json_path, png_path = bench_files(args.out, runs, args.force)
    replaces_committed = json_path.resolve() == RESULTS.resolve()
    print(
        f"benchmarking {size} on {', '.join(map(str, args.stages))} ranks for m = "
        f"{', '.join(map(str, args.micro_batches))} (the fastest of {args.repeats} runs in each of {args.rounds} "
        f"rounds, after {args.warmup} warm-up)",
        flush=True,
    )
    result = _interruptible(
        lambda: run_bench(
            size,
            tuple(args.stages),
            tuple(args.micro_batches),
            args.warmup,
            args.repeats,
            progress=lambda line: print(line, flush=True),
            rounds=args.rounds,
            wait_s=args.wait,
            replaces_committed=replaces_committed,
            force=args.force,
        )
    )
    result["steadiness"] = steady = steadiness(result, args.force)
    print(format_bench(result))
    kept = replaces_committed and not steady["steady"] and not args.force
    if kept:  # the run is still worth reading: it goes where a run without --out goes
        json_path, png_path = bench_files(None, runs, force=True)
    write_json(json_path, result)
    draw_bench(result).savefig(png_path, dpi=100)
    print(f"wrote {json_path} and {png_path}")
    if kept:
        print(
            f"the committed results are kept: this run's steps lie {steady['noise']:.0%} above their fastest at the "
            f"median, more than {steady['threshold']:.0%}, too noisy to tell its ratios apart; run it on a steadier "
            "machine, or pass --force (the file then says so)"
        )
    return 1 if kept else 0


def _pipeline_speed(args: argparse.Namespace) -> int:
    from pp_demo.instruments.bench.in_process_speed import run_speed, speed_size
    from pp_demo.verify.compare import default_device
    from pp_demo.verify.tolerances import dtype_named

    device = args.device or default_device()
    size = speed_size(args.size, device)
    print(
        f"model.forward against the in-process pipeline on {device}, {size} size, {args.dtype}: the median of "
        f"{args.repeats} calls after {args.warmup} warm-up",
        flush=True,
    )
    run_speed(
        args.families,
        size,
        device,
        dtype_named(args.dtype),
        args.warmup,
        args.repeats,
        lambda line: print(line, flush=True),
    )
    return 0


def _train_study(args: argparse.Namespace) -> int:
    from pp_demo.output_paths import study_folder, study_seeds, write_json
    from pp_demo.training.study import main, results_path

    count_value(args.seeds, "--seeds", 1, 1000)
    committed = results_path()
    path = study_folder(args.out, committed.name, args.seeds, args.force) / committed.name
    write_json(path, main(args.seeds), "seeds", study_seeds, args.force)  # checked again: another run may have written
    print(f"wrote {path}")
    if args.out is None and committed.is_file():
        print(f"(the committed {committed} is kept: --out {committed.parent} replaces it)")
    return 0


def _verify_pr(args: argparse.Namespace) -> int:
    from pp_demo.instruments.pull_request.verify import main
    from pp_demo.output_paths import SCRATCH

    return main(args.cache, args.wheelhouse, args.out or str(SCRATCH / "verify_pr.json"))


def _engine(args: argparse.Namespace) -> int:
    from pp_demo.instruments.engine.cli import main

    return main(args)


def _engine_options(engine: argparse.ArgumentParser) -> None:
    from pp_demo.instruments.engine.cli import TREES
    from pp_demo.instruments.engine.run import MODES, PP_STYLES
    from pp_demo.instruments.pull_request.sdists import CHANGE_FILES, FOLLOW_UP_FILES

    pooled = [f for f in FAMILIES if f in CHANGE_FILES + FOLLOW_UP_FILES]
    add(engine, "--family", default=list(CHANGE_FILES), choices=pooled)
    engine.add_argument(
        "--tree",
        nargs="+",
        choices=TREES,
        default=["unpatched", "change"],
        metavar="TREE",
        help=f"ColossalAI trees, one rank start each (default: unpatched change; of: {', '.join(TREES)})",
    )
    engine.add_argument("--schedule", nargs="+", choices=PP_STYLES, default=list(PP_STYLES))
    engine.add_argument("--mode", nargs="+", choices=MODES, default=list(MODES))
    add(engine, "--dtype")
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
    add(
        engine,
        "--out",
        what="every record: a JSON file, or a folder to write colossalai_engine.json in",
        shown="not written",
    )
    add(engine, "--force", what="case records")


def add_record_jobs(jobs: Any) -> None:
    bench = jobs.add_parser(
        "bench",
        help="time the pipeline against the best one process and this machine's limit (not a test)",
        description="The fastest of a few runs of inference and of a training step (forward and backward) on "
        "p ranks against the best one-process run of the same work, one thread per process; this "
        "machine's capacity c from two processes at once; per rank, compute, idle, waiting on "
        "send/recv and bookkeeping; ColossalAI's plugin on the same training step, timed by the same phases. "
        "Ratios to the GPipe ideal, to its limit on this machine and to that limit built from the "
        "micro-batches' own one-process time. It first waits for a quiet machine; a run that started "
        "busier, or whose steps came out noisier than 5 %, does not replace the committed results without "
        "--force (the file says so; a noisy run is written to results/tmp and the command exits 1). Writes "
        "OUT.json and OUT.png.",
    )
    bench.add_argument("--stages", type=count(1, 64), nargs="+", default=[2, 3], help="ranks p (default: 2 3)")
    bench.add_argument(
        "--micro-batches", type=count(1, 1024), nargs="+", default=[2, 4, 8], help="micro-batches m (default: 2 4 8)"
    )
    bench.add_argument("--hidden", type=count(1, 16384), default=512, help="hidden size (default: %(default)s)")
    bench.add_argument("--layers", type=count(1, 256), default=6, help="decoder layers (default: %(default)s)")
    bench.add_argument("--seq", type=count(1, 16384), default=128, help="sequence length (default: %(default)s)")
    bench.add_argument("--batch", type=count(1, 4096), default=16, help="rows per batch (default: %(default)s)")
    bench.add_argument("--warmup", type=count(0, 1000), default=1, help="untimed runs first (default: %(default)s)")
    bench.add_argument(
        "--repeats",
        type=count(1, 1000),
        default=3,
        help="timed runs per round, the fastest kept (default: %(default)s)",
    )
    bench.add_argument(
        "--rounds",
        type=count(1, 100),
        default=2,
        help="rounds of every measurement, one after the other, so the load falls on all alike (default: %(default)s)",
    )
    bench.add_argument(
        "--wait",
        type=float,
        help="seconds to wait at most for a 1-minute load average of 0.5 or less before starting (default: 15 minutes)",
    )
    add(bench, "--force", what="timed runs")
    add(
        bench,
        "--out",
        what="OUT.json and OUT.png, or bench_cpu.json and .png in the folder OUT",
        shown="results/tmp/bench_cpu; --out results/bench_cpu replaces the committed files",
    )
    bench.set_defaults(run=_bench)

    speed = jobs.add_parser(
        "pipeline-speed",
        help="the in-process pipeline's time against model.forward's, per family (a ratio; not a test)",
        description="Time model.forward and the in-process pipeline (pipeline_logits: the fix, 2 stages split at the "
        "middle layer, 2 micro-batches) on the same left-padded batch, the median of timed calls after warm-up, "
        "and print their ratio per family. Real checkpoint shapes on a GPU (pp_demo real-size's), the tiny models "
        "on the CPU.",
    )
    speed.add_argument(
        "--families",
        nargs="+",
        choices=["llama", "qwen2", "opt"],
        default=["llama", "qwen2", "opt"],
        metavar="FAMILY",
        help="which families (default and choices: llama qwen2 opt)",
    )
    speed.add_argument(
        "--size",
        choices=["tiny", "small", "real"],
        help="tiny: the workbook's tiny models; small, real: real-size's shapes (default: real on a GPU, tiny on "
        "the CPU; real is refused on the CPU)",
    )
    speed.add_argument("--warmup", type=count(0, 1000), default=3, help="untimed calls first (default: %(default)s)")
    speed.add_argument(
        "--repeats", type=count(1, 1000), default=10, help="timed calls, the median kept (default: %(default)s)"
    )
    add(speed, "--device")
    add(speed, "--dtype", default="bf16")
    speed.set_defaults(run=_pipeline_speed)

    study = jobs.add_parser("train-study", help="what each pooling rule does to training, over seeds (minutes)")
    study.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default %(default)s)")
    add(
        study,
        "--out",
        what="training_study_<transformers version>.json, into the folder OUT",
        shown="results/tmp; --out results replaces the committed file, given at least as many seeds",
    )
    add(study, "--force", what="seeds")
    study.set_defaults(run=_train_study)

    verify = jobs.add_parser("verify-pr", help="the pull request's claims, judged on ColossalAI's own sdists")
    verify.add_argument(
        "--cache",
        help="folder for the sdists and patched trees (default: $PP_DEMO_CACHE or ~/.cache/pp_demo/colossalai)",
    )
    verify.add_argument(
        "--wheelhouse",
        help="folder searched for the sdists, subfolders included (default: $PP_DEMO_WHEELHOUSE or wheelhouse)",
    )
    add(
        verify,
        "--out",
        what="the record: a file, or a folder to write verify_pr.json in",
        shown="results/tmp/verify_pr.json; --out results/verify_pr.json replaces the committed one",
    )
    verify.set_defaults(run=_verify_pr)

    engine = jobs.add_parser(
        "colossalai-engine",
        help="the bug and the change on ColossalAI's own engine (HybridParallelPlugin, two ranks)",
        description="Run ColossalAI 0.5.0's HybridParallelPlugin(pp_size=2) with Booster.execute_pipeline on "
        "two ranks, per tree of the 0.5.0 sdist, and compare logits, loss and gradients with "
        "model.forward. Needs ColossalAI (make colossalai); fp16 training needs a GPU (ColossalAI's grad scaler).",
        options=_engine_options,
    )
    engine.set_defaults(run=_engine)
