"""``python -m pp_demo``: the workbook's jobs from a shell."""

import argparse
import os
from collections.abc import Iterator, Sequence
from typing import Literal

from pp_demo.pipeline.families import FAMILIES
from pp_demo.pooling.cases import CASES, get_case, row_text
from pp_demo.pooling.padding_table import REFERENCES, format_padding_table
from pp_demo.pooling.rules import CORE_RULES, FIX, RULES
from pp_demo.verify.compare import REPRO_ROWS, reproduce_runs, reproduction_line
from pp_demo.workshop.doctor import main as run_doctor

REPRO_FAMILIES = ("llama", "qwen2", "opt")
# The rules that pool padded rows; known_lengths pools packed batches from their lengths
# (cu_seqlens), which no padded case has, so it is not offered here (notebook 07 shows it).
PADDED_RULES = [name for name, rule in RULES.items() if "cu_seqlens" not in rule.needs]


def _device(text: str) -> str:
    """An argparse type: a device this torch can use, checked before any model is built."""
    import torch

    try:
        device = torch.device(text)
    except RuntimeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a device: use cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise argparse.ArgumentTypeError(f"{text!r}: this torch ({torch.__version__}) sees no CUDA device; use cpu")
    return text


def _positive(text: str) -> int:
    """An argparse type: an int >= 1 (sizes and counts; 0 would fail deep inside a rank)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _table(args: argparse.Namespace) -> int:
    print(format_padding_table(args.rules, args.cases, args.reference))
    return 0


def _explore(args: argparse.Namespace) -> int:
    from pp_demo.workshop.explorer import explore, format_exploration

    mask = None if args.mask is None else " ".join(args.mask)
    print(format_exploration(explore(" ".join(args.ids), mask, args.pad)))
    return 0


def _rows_text() -> str:
    return ", ".join(f"{row_text(get_case(r).input_ids)} ({r}-padded)" for r in REPRO_ROWS)


def _runs(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    for family in args.family:
        for rule in dict.fromkeys(args.rule or [FAMILIES[family].colossalai_rule, FIX]):
            yield family, rule


def _families(args: argparse.Namespace) -> int:
    from pp_demo.verify.family_matrix import format_matrix, pipeline_matrix

    table = pipeline_matrix(
        args.family, args.cases, args.rule, args.attn, on="ranks" if args.distributed else "process"
    )
    if table is None:  # torchrun's first rank: it has no logits, the last rank prints
        return 0
    print(format_matrix(table))
    return 0


def _run_checker(args: argparse.Namespace) -> int:
    import torch

    from pp_demo.verify.checker import check_forward, load_callable, load_model

    forward = load_callable(args.callable)
    model = load_model(args.family if args.model_path is None else None, args.model_path, args.attn)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    report = check_forward(model, forward, dtype=dtype, device=args.device or "cpu")
    print(report.summary())
    return 0 if report.passed else 1


def _bench(args: argparse.Namespace) -> int:
    import json
    import pathlib

    from pp_demo.bench import BenchSize, draw_bench, format_bench, run_bench, write_readme_block
    from pp_demo.bench.report import check_readme

    if args.readme:
        check_readme(args.readme)
    size = BenchSize(hidden=args.hidden, layers=args.layers, seq=args.seq, batch=args.batch)
    print(
        f"benchmarking {size} on {', '.join(map(str, args.stages))} ranks for m = "
        f"{', '.join(map(str, args.micro_batches))} (the fastest of {args.repeats} runs, after {args.warmup} "
        "warm-up)",
        flush=True,
    )
    result = run_bench(
        size,
        tuple(args.stages),
        tuple(args.micro_batches),
        args.warmup,
        args.repeats,
        progress=lambda line: print(line, flush=True),
    )
    print(format_bench(result))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    draw_bench(result).savefig(out.with_suffix(".png"), dpi=100)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}")
    if args.readme:
        write_readme_block(args.readme, result)
        print(f"rewrote the benchmark block of {args.readme}")
    return 0


def _stage_count(args: argparse.Namespace) -> int:
    from pp_demo.pipeline.launch import launched_by_torchrun, torchrun_world_size

    if args.split_at:
        return len(args.split_at) + 1
    return torchrun_world_size() if args.distributed and launched_by_torchrun() else 2


def _reproduce(args: argparse.Namespace) -> int:
    on: Literal["process", "ranks"] = "ranks" if args.distributed else "process"
    points = tuple(args.split_at) if args.split_at else None
    runs = list(_runs(args))
    results = reproduce_runs(runs, points, args.micro_batches, on, device=args.device)
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
    print(f"The bug, reproduced: a {count}-stage pipeline ({where}) against model.forward (the reference)")
    print(f"batch: {_rows_text()}; pad id 0")
    for (family, rule), result in zip(runs, results, strict=True):
        print(f"{family:<8} {rule:<18} {reproduction_line(result)}")
    return 0


def _train_study(args: argparse.Namespace) -> int:
    from pp_demo.training.study import main

    print(f"wrote {main(args.out, args.seeds)}")
    return 0


def _verify_pr(args: argparse.Namespace) -> int:
    from pp_demo.colossalai.verify_pr import main

    return main(args.cache, args.wheelhouse, args.out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    table.add_argument("--cases", nargs="+", choices=list(CASES), help="cases to show (default: all)")
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
    explore.add_argument("ids", nargs="+", help="token ids, e.g. 0 0 5 6 7 8")
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
    reproduce.add_argument("--device", type=_device, default=None, help="cpu or cuda (default: cuda when available)")
    reproduce.add_argument(
        "--distributed",
        action="store_true",
        help="run the stages as ranks, one per stage (spawned here, or the ranks of "
        "torchrun --nproc-per-node STAGES -m pp_demo reproduce --distributed)",
    )
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
    families.set_defaults(run=_families)

    check = jobs.add_parser(
        "check",
        help="check your own pooled forward against model.forward on the padding battery",
        description="Run the padding battery (left, right, none, pad in content, pad == eos, trailing "
        "real eos, all pad, seeded random patterns) through CALLABLE(model, input_ids, "
        "attention_mask) -> logits and through model.forward; report which batches differ, "
        "where each row was pooled and which known rule that matches. Exit 1 on a mismatch.",
    )
    check.add_argument("callable", help="package.module:function, importable from here")
    source = check.add_mutually_exclusive_group()
    source.add_argument(
        "--family", choices=list(FAMILIES), default="llama", help="a tiny seeded pp_demo model (default: %(default)s)"
    )
    source.add_argument("--model-path", default=None, help="a local checkpoint directory (nothing is downloaded)")
    check.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    check.add_argument("--attn", choices=["eager", "sdpa"], default=None, help="attention implementation")
    check.add_argument("--device", type=_device, default=None, help="cpu (default) or cuda")
    check.set_defaults(run=_run_checker)

    bench = jobs.add_parser(
        "bench",
        help="time the pipeline against the best one process and this machine's limit (not a test)",
        description="The fastest of a few runs of inference and of a training step (forward and backward) on "
        "p ranks against the best one-process run of the same work, one thread per process; this "
        "machine's capacity c from two processes at once; per rank, compute, idle, waiting on "
        "send/recv and bookkeeping. Ratios to the GPipe ideal and to its limit on this machine. "
        "Writes OUT.json and OUT.png.",
    )
    bench.add_argument("--stages", type=_positive, nargs="+", default=[2, 3])
    bench.add_argument("--micro-batches", type=_positive, nargs="+", default=[2, 4, 8])
    bench.add_argument("--hidden", type=_positive, default=512)
    bench.add_argument("--layers", type=_positive, default=6)
    bench.add_argument("--seq", type=_positive, default=128)
    bench.add_argument("--batch", type=_positive, default=16)
    bench.add_argument("--warmup", type=int, default=1)
    bench.add_argument("--repeats", type=_positive, default=3)
    bench.add_argument("--out", default="results/bench_cpu", help="output path without suffix")
    bench.add_argument("--readme", default=None, help="also rewrite this README's benchmark block from the results")
    bench.set_defaults(run=_bench)

    doctor = jobs.add_parser(
        "doctor",
        help="check this machine before the workshop (runs without torch)",
        description="One line per check (ok, WARN, FAIL with the fix); exit 1 on a FAIL.",
    )
    doctor.set_defaults(run=lambda args: run_doctor([]))
    study = jobs.add_parser("train-study", help="what each pooling rule does to training, over seeds (minutes)")
    study.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default %(default)s)")
    study.add_argument("--out", default="results", help="folder of training_study_<transformers version>.json")
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
    verify.add_argument("--out", default="results/verify_pr.json", help="the record (default: %(default)s)")
    verify.set_defaults(run=_verify_pr)
    from pp_demo.colossalai.engine_cli import add_parser as add_engine_parser

    add_engine_parser(jobs)  # colossalai-engine: the bug on ColossalAI's own plugin
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except ValueError as error:  # bad input: say what is wrong, no traceback
        # under torchrun every rank finds the same error: the first one says it, once
        quiet = os.environ.get("TORCHELASTIC_RUN_ID") and os.environ.get("RANK", "0") != "0"
        parser.exit(2, None if quiet else f"{parser.prog}: error: {error}\n")
