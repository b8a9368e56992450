"""``python -m pp_demo``: the workbook's jobs from a shell."""

import argparse

from .cases import CASES, as_batch, get_case, row_text
from .compare import REPRO_ROWS, compare_rows, default_atol, forward_logits, reproduce, reproduction_line
from .families import FAMILIES
from .rules import FIX, RULES
from .table import REFERENCES, format_padding_table

REPRO_FAMILIES = ("llama", "qwen2", "opt")


def _table(args):
    print(format_padding_table(args.rules, args.cases, args.reference))
    return 0


def _rows_text():
    return ", ".join(f"{row_text(get_case(r).input_ids)} ({r}-padded)" for r in REPRO_ROWS)


def _runs(args):
    for family in args.family:
        for rule in dict.fromkeys(args.rule or [FAMILIES[family].colossalai_rule, FIX]):
            yield family, rule


def _distributed_lines(args):
    """All runs as jobs of one two-rank start; ``None`` on a torchrun rank that must not print."""
    from .distributed import Job, run_two_ranks
    from .families import build_model

    ids, mask = as_batch(REPRO_ROWS)
    runs = list(_runs(args))
    models = {family: build_model(family) for family in args.family}
    jobs = [Job(models[f], ids, mask, rule=r, split_at=args.split_at, n_micro=args.micro_batches) for f, r in runs]
    results = run_two_ranks(jobs)
    if results is None:
        return None
    return [(f, r, compare_rows(res.logits, forward_logits(models[f], ids, mask), default_atol("cpu")))
            for (f, r), res in zip(runs, results)]


def _two_rank_runner(runs):
    from .distributed import Job, run_two_ranks

    results = run_two_ranks([Job(model, ids, mask, rule=rule) for _, rule, _, model, ids, mask in runs])
    return None if results is None else [r.logits for r in results]


def _families(args):
    from .matrix import format_matrix, pipeline_matrix

    runner = _two_rank_runner if args.distributed else None
    table = pipeline_matrix(args.family, args.cases, args.rule, args.attn, runner)
    if table is None:  # torchrun's first rank: it has no logits, the last rank prints
        return 0
    print(format_matrix(table))
    return 0


def _check(args):
    import torch

    from .checker import check_forward, load_callable, load_model

    forward = load_callable(args.callable)
    model = load_model(args.family if args.model_path is None else None, args.model_path, args.attn)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    report = check_forward(model, forward, dtype=dtype, device=args.device or "cpu")
    print(report.summary())
    return 0 if report.passed else 1


def _bench(args):
    import json
    import pathlib

    from .bench import BenchSize, draw_bench, format_bench, run_bench

    size = BenchSize(hidden=args.hidden, layers=args.layers, seq=args.seq, batch=args.batch)
    print(f"benchmarking {size} for m = {', '.join(map(str, args.micro_batches))} "
          f"({args.repeats} timed runs each, after {args.warmup} warm-up)", flush=True)
    result = run_bench(size, tuple(args.micro_batches), args.warmup, args.repeats)
    print(format_bench(result))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    draw_bench(result).savefig(out.with_suffix(".png"), dpi=120)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}")
    return 0


def _reproduce(args):
    if args.distributed:
        lines = _distributed_lines(args)
        if lines is None:  # torchrun's first rank: the last rank holds the logits and prints
            return 0
        where = "two ranks on torch.distributed.pipelining"
    else:
        lines = [(f, r, reproduce(f, r, split_at=args.split_at, n_micro=args.micro_batches, device=args.device))
                 for f, r in _runs(args)]
        where = "both stages in this process"
    print(format_padding_table(reference="true_last"))
    print()
    print(f"The bug, reproduced: a two-stage pipeline ({where}) against model.forward (the reference)")
    print(f"batch: {_rows_text()}; pad id 0")
    for family, rule, result in lines:
        print(f"{family:<8} {rule:<18} {reproduction_line(result)}")
    return 0


def _verify_pr(args):
    from .verify_pr import main

    return main(args.cache, args.wheelhouse, args.out)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m pp_demo",
        description="Reproduce the pooled-token bug of pipeline-parallel sequence classification "
                    "(ColossalAI 0.5.0, issue 6457) and its pad == eos cousin.")
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")

    table = jobs.add_parser("table", help="which position each pooling rule picks on each padding case")
    table.add_argument("--rules", nargs="+", choices=list(RULES), help="rules to show (default: all)")
    table.add_argument("--cases", nargs="+", choices=list(CASES), help="cases to show (default: all)")
    table.add_argument("--reference", choices=list(REFERENCES), default="true_last",
                       help="judge each cell against the true last real token (default) or the "
                            "position model.forward pools")
    table.set_defaults(run=_table)

    reproduce = jobs.add_parser(
        "reproduce", help="the main job: the padding table and the bug, reproduced",
        description="Split tiny seeded models in two stages and compare the pipeline's logits with "
                    "model.forward on a left-padded and a right-padded row. By default each family runs "
                    "with the rule of its ColossalAI 0.5.0 pipeline forward and with the fix.")
    reproduce.add_argument("--family", nargs="+", choices=list(FAMILIES), default=list(REPRO_FAMILIES),
                           metavar="FAMILY", help=f"model families (default: %(default)s; supported: "
                                                  f"{', '.join(FAMILIES)})")
    reproduce.add_argument("--rule", nargs="+", choices=list(RULES), metavar="RULE",
                           help=f"pooling rules of the last stage ({', '.join(RULES)})")
    reproduce.add_argument("--split-at", type=int, default=None,
                           help="first layer of the last stage (default: half the layers)")
    reproduce.add_argument("--micro-batches", type=int, default=1, help="micro-batches per batch (default 1)")
    reproduce.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    reproduce.add_argument("--distributed", action="store_true",
                           help="run the stages as two ranks (spawned here, or the ranks of "
                                "torchrun --nproc-per-node 2 -m pp_demo reproduce --distributed)")
    reproduce.set_defaults(run=_reproduce)
    families = jobs.add_parser(
        "families", help="family x padding case x rule: does the two-stage pipeline match model.forward?",
        description="Run every family's two-stage pipeline with the rule of its ColossalAI 0.5.0 "
                    "forward and with the fix on every padding case, and mark each row against "
                    "model.forward.")
    families.add_argument("--family", nargs="+", choices=list(FAMILIES), metavar="FAMILY",
                          help=f"families (default: all: {', '.join(FAMILIES)})")
    families.add_argument("--cases", nargs="+", choices=list(CASES), metavar="CASE",
                          help=f"padding cases (default: all: {', '.join(CASES)})")
    families.add_argument("--rule", nargs="+", choices=list(RULES), metavar="RULE",
                          help="rules (default: each family's ColossalAI 0.5.0 rule and the fix)")
    families.add_argument("--attn", choices=["eager", "sdpa"], default=None,
                          help="attention implementation (default: what transformers picks)")
    families.add_argument("--distributed", action="store_true", help="run the stages as two ranks")
    families.set_defaults(run=_families)

    check = jobs.add_parser(
        "check", help="check your own pooled forward against model.forward on the padding battery",
        description="Run the padding battery (left, right, none, pad in content, pad == eos, trailing "
                    "real eos, all pad, seeded random patterns) through CALLABLE(model, input_ids, "
                    "attention_mask) -> logits and through model.forward; report which batches differ, "
                    "where each row was pooled and which known rule that matches. Exit 1 on a mismatch.")
    check.add_argument("callable", help="package.module:function, importable from here")
    source = check.add_mutually_exclusive_group()
    source.add_argument("--family", choices=list(FAMILIES), default="llama",
                        help="a tiny seeded pp_demo model (default: %(default)s)")
    source.add_argument("--model-path", default=None, help="a local checkpoint directory (nothing is downloaded)")
    check.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    check.add_argument("--attn", choices=["eager", "sdpa"], default=None, help="attention implementation")
    check.add_argument("--device", default=None, help="cpu (default) or cuda")
    check.set_defaults(run=_check)

    bench = jobs.add_parser(
        "bench", help="time the two-rank pipeline against one process (a benchmark, not a test)",
        description="Median time of inference and of a training step (forward and backward) for the "
                    "two-rank pipeline and for one process running the whole model, one thread per "
                    "process, plus one process with two threads; speedups against the GPipe ideal "
                    "2m/(m+1). Writes OUT.json and OUT.png.")
    bench.add_argument("--micro-batches", type=int, nargs="+", default=[1, 2, 4, 8])
    bench.add_argument("--hidden", type=int, default=512)
    bench.add_argument("--layers", type=int, default=8)
    bench.add_argument("--seq", type=int, default=128)
    bench.add_argument("--batch", type=int, default=32)
    bench.add_argument("--warmup", type=int, default=1)
    bench.add_argument("--repeats", type=int, default=5)
    bench.add_argument("--out", default="results/bench_cpu", help="output path without suffix")
    bench.set_defaults(run=_bench)

    verify = jobs.add_parser("verify-pr", help="the pull request's claims, judged on ColossalAI's own sdists")
    verify.add_argument("--cache", help="folder for the sdists and patched trees (default: $PP_DEMO_CACHE "
                                        "or ~/.cache/pp_demo/colossalai)")
    verify.add_argument("--wheelhouse", help="folder searched for the sdists, subfolders included "
                                             "(default: $PP_DEMO_WHEELHOUSE or wheelhouse)")
    verify.add_argument("--out", default="results/verify_pr.json", help="the record (default: %(default)s)")
    verify.set_defaults(run=_verify_pr)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as error:  # bad input: say what is wrong, no traceback
        parser.exit(2, f"{parser.prog}: error: {error}\n")
