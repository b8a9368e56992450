"""``python -m pp_demo``: the workbook's jobs from a shell."""

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn

from pp_demo.bounds import count_value
from pp_demo.errors import BadInput
from pp_demo.output_paths import SCRATCH, check_folder_writable, check_not_fewer, is_committed_result, output_path
from pp_demo.pipeline.families import FAMILIES, rules_for
from pp_demo.pipeline.torchrun_env import INTERRUPTED, check_torchrun_env, say_once, stop_on_interrupt
from pp_demo.pooling.cases import CASES, get_case, row_text
from pp_demo.pooling.padding_table import REFERENCES, format_padding_table
from pp_demo.pooling.rules import CORE_RULES, PADDED_RULES
from pp_demo.verify.compare import REPRO_FAMILIES, REPRO_ROWS, reproduce_runs, reproduction_line
from pp_demo.verify.tolerances import DTYPES, dtype_named
from pp_demo.workshop.doctor import main as run_doctor


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors torchrun's ranks print once, not once per rank."""

    def error(self, message: str) -> NoReturn:
        say_once(f"{self.format_usage().rstrip()}\n{self.prog}: error: {message}")
        self.exit(2)


def _device(text: str) -> str:
    """An argparse type: a device this torch can use, checked before any model is built."""
    from pp_demo.pipeline.validate import check_device

    try:
        return check_device(text)
    except BadInput as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _not_under_torchrun(args: argparse.Namespace) -> None:
    """Under torchrun a run without --distributed would repeat the whole job on every rank."""
    from pp_demo.pipeline.launch import launched_by_torchrun

    check_torchrun_env()
    if launched_by_torchrun() and not args.distributed:
        raise BadInput(f"under torchrun every rank would run the whole {args.job} itself: add --distributed")


def _positive(text: str) -> int:
    """An argparse type: an int >= 1 (sizes and counts; 0 would fail deep inside a rank)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _at_least_0(text: str) -> int:
    """An argparse type: an int >= 0 (untimed runs)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer of 0 or more, got {text!r}")
    return int(text)


def _add_dtype(job: argparse.ArgumentParser) -> None:
    job.add_argument(
        "--dtype",
        choices=list(DTYPES),
        default="fp32",
        help="precision of the model and of its model.forward reference, judged with that "
        "precision's tolerance (default: %(default)s)",
    )


def _table(args: argparse.Namespace) -> int:
    print(format_padding_table(args.rules, args.cases, args.reference))
    return 0


def _explore(args: argparse.Namespace) -> int:
    from pp_demo.workshop.explorer import explore, format_exploration

    if not args.ids:
        raise BadInput(
            "no token ids: --mask takes every number after it, so give the ids first (explore 0 0 5 6 --mask 0 0 1 1)"
        )
    mask = None if args.mask is None else " ".join(args.mask)
    print(format_exploration(explore(" ".join(args.ids), mask, args.pad)))
    return 0


def _rows_text() -> str:
    return ", ".join(f"{row_text(get_case(r).input_ids)} ({r}-padded)" for r in REPRO_ROWS)


def _runs(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    for family in args.family:
        for rule in rules_for(family, args.rule):
            yield family, rule


def _families(args: argparse.Namespace) -> int:
    from pp_demo.verify.compare import default_device
    from pp_demo.verify.family_matrix import closest_calls, format_matrix, pipeline_differences

    _not_under_torchrun(args)
    on: Literal["process", "ranks"] = "ranks" if args.distributed else "process"
    device, dtype = args.device or default_device(), dtype_named(args.dtype)
    found = pipeline_differences(args.family, args.cases, args.rule, args.attn, on, None, device, dtype)
    if found is None:  # torchrun's first rank: it has no logits, the last rank prints
        return 0
    differences, atol = found
    print(format_matrix({cell: diff <= atol for cell, diff in differences.items()}))
    if args.dtype != "fp32":  # half precision's tolerance is wide: show how close the verdicts came
        print(f"in {args.dtype}:\n{closest_calls(differences, atol)}")
    return 0


def _run_checker(args: argparse.Namespace) -> int:
    from pp_demo.verify.checker.cli import run_check

    return run_check(args)


def _bench(args: argparse.Namespace) -> int:
    import json

    from pp_demo.bench import BenchSize, format_bench, run_bench
    from pp_demo.bench.report import RESULTS
    from pp_demo.figures.bench import draw_bench

    _check_bench_stages(args.layers, args.stages)
    if args.hidden % 8:  # the bench's Llama has 8 attention heads (pp_demo.bench.one_process.BenchSize)
        raise BadInput(f"--hidden {args.hidden}: the bench's model has 8 attention heads: give a multiple of 8")
    json_path = output_path(args.out or SCRATCH / "bench_cpu", "bench_cpu.json").with_suffix(".json")
    png_path = output_path(json_path.with_suffix(".png"), "bench_cpu.png")
    check_not_fewer(
        json_path,
        "timed runs",
        _bench_runs(args.stages, args.micro_batches, args.repeats),
        _bench_record_runs,
        args.force,
    )
    size = BenchSize(hidden=args.hidden, layers=args.layers, seq=args.seq, batch=args.batch)
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
            replaces_committed=json_path.resolve() == RESULTS.resolve(),
            force=args.force,
        )
    )
    print(format_bench(result))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=1) + "\n")
    draw_bench(result).savefig(png_path, dpi=100)
    print(f"wrote {json_path} and {png_path}")
    return 0


def _interruptible(work: Callable[[], Any]) -> Any:
    """``work()``, whose processes (ranks, the bench's one-process runs) come from the fork
    server: it and they ignore Ctrl-C (``pp_demo.pipeline.fork_server_signals``), so only
    this process is told, and stops them here; ``main`` then says so in one line."""
    import multiprocessing

    from pp_demo.pipeline.launch import prepare_fork_server

    prepare_fork_server()
    try:
        return work()
    except KeyboardInterrupt:
        for child in multiprocessing.active_children():
            child.kill()
            child.join()
        raise


def _check_bench_stages(layers: int, stages: Sequence[int]) -> None:
    """Each stage holds at least one layer, and a pipeline has two stages or more: said in the
    flags' own words, before any rank starts."""
    if layers < 2:
        raise BadInput(f"--layers {layers}: a pipeline needs 2 layers or more (one per stage); give --layers 2 or more")
    for p in stages:
        if not 2 <= p <= layers:
            raise BadInput(
                f"--stages {p} with --layers {layers}: each stage holds at least one layer, so give --stages "
                f"from 2 to {layers} (or more --layers)"
            )


def _bench_runs(stages: Sequence[int], micro_batches: Sequence[int], repeats: int) -> int:
    return len(stages) * len(micro_batches) * repeats


def _bench_record_runs(record: dict[str, Any]) -> int:
    settings = record["settings"]
    return _bench_runs(settings["stages"], settings["micro_batches"], settings["repeats"])


def _study_seeds(record: dict[str, Any]) -> int:
    seeds = record["settings"]["seeds"] if "settings" in record else record["seeds"]
    return len(seeds)


def _stage_count(args: argparse.Namespace) -> int:
    from pp_demo.pipeline.launch import launched_by_torchrun, torchrun_world_size

    if args.split_at:
        return len(args.split_at) + 1
    return torchrun_world_size() if args.distributed and launched_by_torchrun() else 2


def _print_placement_note(n_ranks: int) -> None:
    """One line when the ranks ran on the CPU although there are GPUs, and why."""
    from pp_demo.pipeline.launch import ranks_placement

    note = ranks_placement(n_ranks)[2]
    if note is not None:
        print(note)


def _reproduce(args: argparse.Namespace) -> int:
    _not_under_torchrun(args)
    on: Literal["process", "ranks"] = "ranks" if args.distributed else "process"
    points = tuple(args.split_at) if args.split_at else None
    runs = list(_runs(args))
    dtype = dtype_named(args.dtype)
    results = reproduce_runs(runs, points, args.micro_batches, on, device=args.device, dtype=dtype)
    if results is None:  # a torchrun rank without the logits: the last rank prints
        return 0
    n = _stage_count(args)
    count = {2: "two", 3: "three", 4: "four"}.get(n, str(n))
    where = (
        f"{count} ranks on torch.distributed.pipelining"
        if args.distributed
        else ("both stages in this process" if n == 2 else f"all {count} stages in this process")
    )
    print(format_padding_table(reference="true_last"))
    print()
    precision = "" if args.dtype == "fp32" else f", both in {args.dtype}"
    print(f"The bug, reproduced: a {count}-stage pipeline ({where})")
    print(f"against model.forward (the reference{precision})")
    print(f"batch: {_rows_text()}; pad id 0")
    if args.distributed:
        _print_placement_note(n)
    for (family, rule), result in zip(runs, results, strict=True):
        print(f"{family:<8} {rule:<18} {reproduction_line(result)}")
    return 0


def _study_folder(args: argparse.Namespace, name: str) -> Path:
    """The folder train-study writes ``name`` into, checked; a committed file of more seeds is kept."""
    import json

    folder = Path(args.out or SCRATCH)
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"--out {folder} is a file: train-study writes {name} into a folder")
    check_folder_writable(folder, "--out")
    if (folder / name).is_dir():
        raise BadInput(f"--out {folder}: {folder / name} is a folder, not a file")
    committed = folder / name
    if is_committed_result(committed) and not args.force:
        seeds = len(json.loads(committed.read_text())["settings"]["seeds"])
        if args.seeds < seeds:
            print(f"the committed {committed} has {seeds} seeds, this run {args.seeds}: writing to {SCRATCH}")
            check_folder_writable(SCRATCH, "--out")
            folder = SCRATCH
    check_not_fewer(folder / name, "seeds", args.seeds, _study_seeds, args.force)
    return folder


def _train_study(args: argparse.Namespace) -> int:
    from pp_demo.training.study import main, results_path

    count_value(args.seeds, "--seeds", 1, 1000)
    committed = results_path()
    folder = _study_folder(args, committed.name)
    print(f"wrote {main(folder, args.seeds)}")
    if args.out is None and committed.is_file():
        print(f"(the committed {committed} is kept: --out {committed.parent} replaces it)")
    return 0


def _verify_pr(args: argparse.Namespace) -> int:
    from pp_demo.colossalai.pull_request.verify import main

    return main(args.cache, args.wheelhouse, args.out if args.out is not None else str(SCRATCH / "verify_pr.json"))


def _add_gpu_check(jobs: "argparse._SubParsersAction[_Parser]") -> None:
    from pp_demo.workshop.gpu_check import add_options, run_check

    gpu = jobs.add_parser("gpu-check", help="every GPU path once, on a GPU box (docs/gpu.md); installs nothing")
    add_options(gpu)
    gpu.set_defaults(run=lambda args: run_check(args, build_parser()))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m pp_demo",
        description="Reproduce the pooled-token bug of pipeline-parallel sequence classification "
        "(ColossalAI 0.5.0, issue 6457) and its pad == eos cousin.",
    )
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")

    table = jobs.add_parser("table", help="which position each pooling rule picks on each padding case")
    table.add_argument(
        "--rules",
        nargs="+",
        choices=PADDED_RULES,
        metavar="RULE",
        help=f"rules to show, of {', '.join(PADDED_RULES)} (default: the review table's {', '.join(CORE_RULES)})",
    )
    table.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        metavar="CASE",
        help=f"cases to show (default: all: {', '.join(CASES)})",
    )
    table.add_argument(
        "--reference",
        choices=list(REFERENCES),
        default="true_last",
        help="judge each cell against the true last real token (default) or the position model.forward pools",
    )
    table.set_defaults(run=_table)

    explore = jobs.add_parser(
        "explore",
        help="where every pooling rule lands on a row of your own",
        description="Run every rule that reads the ids or the mask on one row.",
    )
    explore.add_argument("ids", nargs="*", metavar="ID", help="token ids, e.g. 0 0 5 6 7 8")
    explore.add_argument("--mask", nargs="+", default=None, help="attention mask, 0 or 1 per id (default: all 1)")
    explore.add_argument("--pad", type=int, default=0, help="pad token id (default: 0)")
    explore.set_defaults(run=_explore)

    reproduce = jobs.add_parser(
        "reproduce",
        help="the main job: the padding table and the bug, reproduced",
        description="Split tiny seeded models in two stages and compare the pipeline's logits with "
        "model.forward on a left-padded and a right-padded row. By default each family runs "
        "with the rule of its ColossalAI 0.5.0 pipeline forward and with the fix.",
    )
    reproduce.add_argument(
        "--family",
        nargs="+",
        choices=list(FAMILIES),
        default=list(REPRO_FAMILIES),
        metavar="FAMILY",
        help=f"model families (default: %(default)s; supported: {', '.join(FAMILIES)})",
    )
    reproduce.add_argument(
        "--rule",
        nargs="+",
        choices=PADDED_RULES,
        metavar="RULE",
        help=f"pooling rules of the last stage ({', '.join(PADDED_RULES)})",
    )
    reproduce.add_argument(
        "--split-at",
        type=int,
        nargs="+",
        default=None,
        metavar="LAYER",
        help="first layer of each stage after the first: K gives two stages, "
        "K1 K2 three (default: half the layers; under torchrun, one stage per rank)",
    )
    reproduce.add_argument("--micro-batches", type=int, default=1, help="micro-batches per batch (default 1)")
    reproduce.add_argument(
        "--device", type=_device, default=None, help="cpu, or a GPU this torch sees (default: cuda when available)"
    )
    reproduce.add_argument(
        "--distributed",
        action="store_true",
        help="run the stages as ranks, one per stage (spawned here, or the ranks of "
        "torchrun --nproc-per-node STAGES -m pp_demo reproduce --distributed)",
    )
    _add_dtype(reproduce)
    reproduce.set_defaults(run=_reproduce)
    families = jobs.add_parser(
        "families",
        help="family x padding case x rule: does the two-stage pipeline match model.forward?",
        description="Run every family's two-stage pipeline with the rule of its ColossalAI 0.5.0 "
        "forward and with the fix on every padding case, and mark each row against "
        "model.forward.",
    )
    families.add_argument(
        "--family",
        nargs="+",
        choices=list(FAMILIES),
        metavar="FAMILY",
        help=f"families (default: all: {', '.join(FAMILIES)})",
    )
    families.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        metavar="CASE",
        help=f"padding cases (default: all: {', '.join(CASES)})",
    )
    families.add_argument(
        "--rule",
        nargs="+",
        choices=PADDED_RULES,
        metavar="RULE",
        help="rules (default: each family's ColossalAI 0.5.0 rule and the fix)",
    )
    families.add_argument(
        "--attn",
        choices=["eager", "sdpa"],
        default=None,
        help="attention implementation (default: what transformers picks)",
    )
    families.add_argument("--distributed", action="store_true", help="run the stages as ranks, one per stage")
    families.add_argument("--device", type=_device, default=None, help="cpu or cuda (default: cuda when available)")
    _add_dtype(families)
    families.set_defaults(run=_families)

    from pp_demo.verify.checker.cli import add_check_arguments

    check = jobs.add_parser(
        "check",
        help="check your own pooled forward against model.forward on the padding battery",
        description="Run the padding battery (left, right, none, pad in content, pad == eos, trailing "
        "real eos, all pad, seeded random patterns) through CALLABLE(model, input_ids, "
        "attention_mask) -> logits; judge every batch against model.forward (the true last "
        "real token for a model without a pad id); report where each row was pooled and which "
        "known rule that matches. Exit 0 pass, 1 mismatch, 2 usage error, 3 your callable "
        "failed (raised, timed out, returned no logits), 130 interrupted.",
    )
    add_check_arguments(check)
    check.set_defaults(run=_run_checker)

    bench = jobs.add_parser(
        "bench",
        help="time the pipeline against the best one process and this machine's limit (not a test)",
        description="The fastest of a few runs of inference and of a training step (forward and backward) on "
        "p ranks against the best one-process run of the same work, one thread per process; this "
        "machine's capacity c from two processes at once; per rank, compute, idle, waiting on "
        "send/recv and bookkeeping; ColossalAI's plugin on the same training step, timed by the same phases. "
        "Ratios to the GPipe ideal, to its limit on this machine and to that limit built from the "
        "micro-batches' own one-process time. It first waits for a quiet machine, and a run that started "
        "busier does not replace the committed results without --force. Writes OUT.json and OUT.png.",
    )
    bench.add_argument("--stages", type=_positive, nargs="+", default=[2, 3], help="ranks p (default: 2 3)")
    bench.add_argument(
        "--micro-batches", type=_positive, nargs="+", default=[2, 4, 8], help="micro-batches m (default: 2 4 8)"
    )
    bench.add_argument("--hidden", type=_positive, default=512, help="hidden size (default: %(default)s)")
    bench.add_argument("--layers", type=_positive, default=6, help="decoder layers (default: %(default)s)")
    bench.add_argument("--seq", type=_positive, default=128, help="sequence length (default: %(default)s)")
    bench.add_argument("--batch", type=_positive, default=16, help="rows per batch (default: %(default)s)")
    bench.add_argument("--warmup", type=_at_least_0, default=1, help="untimed runs first (default: %(default)s)")
    bench.add_argument(
        "--repeats", type=_positive, default=3, help="timed runs per round, the fastest kept (default: %(default)s)"
    )
    bench.add_argument(
        "--rounds",
        type=_positive,
        default=2,
        help="rounds of every measurement, one after the other, so the load falls on all alike (default: %(default)s)",
    )
    bench.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds to wait at most for a 1-minute load average of 0.5 or less before starting (default: 15 minutes)",
    )
    bench.add_argument(
        "--force",
        action="store_true",
        help="replace a bench file of more timed runs than this one, or the committed results from a run that"
        " started busier (the file says so)",
    )
    bench.add_argument(
        "--out",
        default=None,
        help="OUT.json and OUT.png, or a folder to write bench_cpu.json and .png in (default: results/tmp/bench_cpu;"
        " --out results/bench_cpu replaces the committed files)",
    )
    bench.set_defaults(run=_bench)

    doctor = jobs.add_parser(
        "doctor",
        help="check this machine before the workshop (runs without torch)",
        description="One line per check (ok, WARN, FAIL with the fix); exit 1 on a FAIL.",
    )
    doctor.add_argument("--checkout", default=".", help="the workbook's checkout: its pins and notebooks (default: .)")
    doctor.set_defaults(run=lambda args: run_doctor(["--checkout", args.checkout]))
    study = jobs.add_parser("train-study", help="what each pooling rule does to training, over seeds (minutes)")
    study.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default %(default)s)")
    study.add_argument(
        "--out",
        default=None,
        help="folder of training_study_<transformers version>.json (default: results/tmp; --out results replaces the"
        " committed file, given at least as many seeds)",
    )
    study.add_argument("--force", action="store_true", help="replace a results file of more seeds than this run")
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
    verify.add_argument(
        "--out",
        default=None,
        help="the record, a file or a folder to write verify_pr.json in (default: results/tmp/verify_pr.json;"
        " --out results/verify_pr.json replaces the committed one)",
    )
    verify.set_defaults(run=_verify_pr)
    _add_gpu_check(jobs)
    from pp_demo.colossalai.engine.cli import add_parser as add_engine_parser

    add_engine_parser(jobs)  # colossalai-engine: the bug on ColossalAI's own plugin
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # check runs itself again, as its own child
    try:
        with stop_on_interrupt():
            if args.job != "doctor":  # every job that may join ranks: the variables first, before any rendezvous
                check_torchrun_env()
            code: int = args.run(args)
        return code
    except BadInput as error:  # pp_demo's own input errors only: anything else keeps its traceback
        # under torchrun every rank finds the same error: the first one to get here says it, once
        say_once(f"{parser.prog}: error: {' '.join(str(error).split())}")
        parser.exit(2)
    except KeyboardInterrupt:  # the ranks are stopped on the way out (pp_demo.pipeline.launch)
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of the output left (`| head`): nothing more to say to it
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet
        return 141
