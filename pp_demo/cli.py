"""``python -m pp_demo``: the workbook's jobs from a shell."""

import argparse

from .cases import CASES, get_case
from .compare import REPRO_ROWS, reproduce, reproduction_line
from .families import FAMILIES
from .rules import FIX, RULES
from .table import REFERENCES, format_padding_table

REPRO_FAMILIES = ("llama", "qwen2", "opt")


def _table(args):
    print(format_padding_table(args.rules, args.cases, args.reference))
    return 0


def _rows_text():
    return ", ".join("[" + ",".join(map(str, get_case(r).input_ids)) + f"] ({r}-padded)" for r in REPRO_ROWS)


def _reproduce(args):
    print(format_padding_table(reference="true_last"))
    print()
    print("The bug, reproduced: a two-stage pipeline against model.forward (the reference)")
    print(f"batch: {_rows_text()}; pad id 0")
    for family in args.family:
        rules = args.rule or [FAMILIES[family].colossalai_rule, FIX]
        for rule in dict.fromkeys(rules):
            result = reproduce(family, rule, split_at=args.split_at, n_micro=args.micro_batches,
                               device=args.device)
            print(f"{family:<8} {rule:<18} {reproduction_line(result)}")
    return 0


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
    reproduce.set_defaults(run=_reproduce)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as error:  # bad input: say what is wrong, no traceback
        parser.exit(2, f"{parser.prog}: error: {error}\n")
