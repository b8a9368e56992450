"""``python -m pp_demo``: the workbook's jobs from a shell."""

import argparse

from .cases import CASES
from .rules import RULES
from .table import REFERENCES, format_padding_table


def _table(args):
    print(format_padding_table(args.rules, args.cases, args.reference))
    return 0


def _reproduce(args):
    print(format_padding_table(reference="true_last"))
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

    reproduce = jobs.add_parser("reproduce", help="the main job: the padding table and the bug, reproduced")
    reproduce.set_defaults(run=_reproduce)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)
