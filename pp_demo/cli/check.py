"""``check``: a user's pooled forward on the padding battery (its run: ``pp_demo.verify.checker.cli``)."""

import argparse
from typing import Any

from pp_demo.bounds import MAX_BATCH_SIZE, MAX_LENGTH, MAX_MICRO_BATCHES, seconds
from pp_demo.cli.options import add, count, integer_up_to
from pp_demo.errors import BadInput


def _seconds(text: str) -> float:
    try:
        return seconds(float(text), "--timeout")
    except ValueError as error:  # BadInput is one
        message = str(error) if isinstance(error, BadInput) else f"--timeout takes seconds, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def _check(args: argparse.Namespace) -> int:
    if args.engine == "deepspeed":  # CALLABLE builds a DeepSpeed PipelineModule; ranks are started for it
        from pp_demo.deepspeed.check import run_deepspeed_check

        return run_deepspeed_check(args)
    from pp_demo.verify.checker.cli import run_check

    return run_check(args)


def add_check_job(jobs: Any) -> None:
    jobs.add_parser(
        "check",
        help="check your own pooled forward against model.forward on the padding battery",
        description="Run the padding battery (left, right, none, pad in content, pad == eos, trailing "
        "real eos, all pad, seeded random patterns) through CALLABLE(model, input_ids, "
        "attention_mask) -> logits; judge every batch against model.forward (the true last "
        "real token for a model without a pad id); report where each row was pooled and which "
        "known rule that matches. Exit 0 pass, 1 mismatch, 2 usage error, 3 your callable "
        "failed (raised, timed out, returned no logits), 130 interrupted, 143 stopped by SIGTERM.",
        options=_check_options,
    )


def _check_options(check: argparse.ArgumentParser) -> None:
    """The checker's options: its battery's cases come with it, loaded only for ``check``."""
    from pp_demo.verify.checker.batches import NAMED, RANDOM

    check.add_argument("callable", help="package.module:function, importable from here")
    source = check.add_mutually_exclusive_group()
    add(source, "--family", shown="llama", nargs=None)
    source.add_argument(
        "--model-path",
        help="a local checkpoint directory (nothing is downloaded); handed to a callable with a model_path keyword",
    )
    for flag in ("--dtype", "--attn"):
        add(check, flag)
    add(check, "--device", default="cpu", type=str)  # checked by the checker: it runs on cpu or cuda
    check.add_argument(
        "--atol",
        type=float,
        help="largest |diff| that matches (default: by dtype); finite, > 0, and below the smallest difference "
        "between the reference and another position on the battery",
    )
    check.add_argument("--seed", type=int, default=0, help="seed of the battery's random batches (default 0)")
    check.add_argument(
        "--lengths", type=integer_up_to(MAX_LENGTH), nargs="+", default=[5, 9, 16], help="random batches' lengths"
    )
    check.add_argument(
        "--batch-sizes", type=integer_up_to(MAX_BATCH_SIZE), nargs="+", help="random batches' sizes (default 2 4 7)"
    )
    add(check, "--cases", choices=[*NAMED, RANDOM])
    check.add_argument(
        "--micro-batches",
        type=integer_up_to(MAX_MICRO_BATCHES),
        default=1,
        metavar="M",
        help="every batch a multiple of M rows (named cases repeat their rows; default sizes round up)",
    )
    check.add_argument(
        "--timeout",
        type=_seconds,
        default=120.0,
        help="seconds per batch before the callable is abandoned and the check stops (more than 0, at most 86400)",
    )
    check.add_argument(
        "--engine",
        choices=["forward", "deepspeed"],
        default="forward",
        help="forward (default): CALLABLE is the forward; deepspeed: CALLABLE(model) builds your DeepSpeed "
        "PipelineModule, and the command starts --ranks CPU ranks that run it with eval_batch (docs/checker.md)",
    )
    check.add_argument(
        "--ranks",
        type=count(2, 8),
        default=2,
        metavar="N",
        help="with --engine deepspeed: ranks (pipeline stages) to start, 2 to 8 (default 2)",
    )
    check.set_defaults(run=_check)
