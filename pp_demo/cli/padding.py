"""``table``, ``explore``, ``reproduce``, ``families``, ``real-size``: where the rules pool; the pipeline against
``model.forward``."""

import argparse
from typing import Any, Literal

from pp_demo.cli.options import add
from pp_demo.core import CORE_RULES
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import REFERENCES, format_padding_table
from pp_demo.pooling.positions import PADDED_RULES
from pp_demo.verify.compare import REPRO_FAMILIES
from pp_demo.verify.tolerances import dtype_named


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


def _where(args: argparse.Namespace) -> Literal["process", "ranks"]:
    """Where the stages run; under torchrun without --distributed every rank would repeat the whole job."""
    from pp_demo.ranks.torchrun_env import is_torchrun_rank

    if is_torchrun_rank() and not args.distributed:
        raise BadInput(f"under torchrun every rank would run the whole {args.job} itself: add --distributed")
    return "ranks" if args.distributed else "process"


def _families(args: argparse.Namespace) -> int:
    from pp_demo.core import FAMILIES
    from pp_demo.verify.compare import default_device
    from pp_demo.verify.family_matrix import attention_families, closest_calls, format_matrix, pipeline_differences

    on, device, dtype = _where(args), args.device or default_device(), dtype_named(args.dtype)
    families = args.family
    if families is None and args.attn is not None:  # every family: those without this attention named, left out
        families, without = attention_families(list(FAMILIES), args.attn)
        if without:
            print(f"--attn {args.attn}: left out {', '.join(without)}, whose classifiers have no {args.attn} attention")
    found = pipeline_differences(families, args.cases, args.rule, args.attn, on, None, device, dtype)
    if found is None:  # torchrun's first rank: it has no logits, the last rank prints
        return 0
    differences, atol = found
    print(format_matrix({cell: diff <= atol for cell, diff in differences.items()}))
    if args.dtype != "fp32":  # half precision's tolerance is wide: show how close the verdicts came
        print(f"in {args.dtype}:\n{closest_calls(differences, atol)}")
    return 0


def _outside_tested_torch(args: argparse.Namespace, error: Exception) -> None:
    """A distributed run that failed on a torch outside the tested range: one line that says so
    (torch 2.10's pipelining stops with "Number of microbatches (1) must be >= the number of
    stages", which names neither the range nor the fix). Inside the range, the error as it is."""
    import torch

    from pp_demo.workshop.platform_checks import tested_torch_range, torch_in_tested_range

    if not args.distributed or isinstance(error, BadInput) or torch_in_tested_range(torch.__version__):
        return
    first = (str(error).strip().splitlines() or [""])[0]
    raise BadInput(
        f"reproduce --distributed failed on torch {torch.__version__}, outside the tested range "
        f"{tested_torch_range()} ({type(error).__name__}: {first}): install a torch in the range (docs/gpu.md)"
    ) from error


def _reproduce(args: argparse.Namespace) -> int:
    """The main job, as the idea reads: build, batch, split, run, compare (``reproduce_runs``), print."""
    from pp_demo.verify.compare import reproduce_runs, reproduction_header, reproduction_line, rules_for

    runs = [(family, rule) for family in args.family for rule in rules_for(family, args.rule)]
    points = tuple(args.split_at) if args.split_at else None
    if args.engine == "deepspeed":
        from pp_demo.deepspeed.reproduce import print_deepspeed_reproduction

        return print_deepspeed_reproduction(runs, points, args.micro_batches, args.dtype, args.device)
    dtype = dtype_named(args.dtype)
    try:
        compared = reproduce_runs(runs, points, args.micro_batches, _where(args), device=args.device, dtype=dtype)
    except Exception as error:
        _outside_tested_torch(args, error)
        raise
    if compared is None:  # a torchrun rank without the logits: the last rank prints
        return 0
    print(format_padding_table(reference="true_last"))
    print(reproduction_header(points, args.distributed, args.dtype))
    for (family, rule), comparison in zip(runs, compared, strict=True):
        print(f"{family:<8} {rule:<18} {reproduction_line(comparison)}")
    return 0


def _real_size(args: argparse.Namespace) -> int:
    from pp_demo.verify.compare import default_device
    from pp_demo.verify.real_size import REAL_SHAPES, choose_size, run_real_size

    if args.checkpoint is not None and args.families is not None:  # the checkpoint is its own family
        raise BadInput("--families picks the shapes to build; --checkpoint runs the checkpoint's own: give one")
    device = args.device or default_device()
    size, why = choose_size(args.size, device, args.allow_cpu, checkpoint=args.checkpoint is not None)
    if why:
        print(why, flush=True)
    families = args.families or list(REAL_SHAPES)
    say = lambda line: print(line, flush=True)  # noqa: E731
    run_real_size(families, size, device, dtype_named(args.dtype), args.checkpoint, say, args.allow_cpu)
    return 0


def add_padding_jobs(jobs: Any) -> None:
    table = jobs.add_parser("table", help="which position each pooling rule picks on each padding case")
    table.add_argument(
        "--rules",
        nargs="+",
        choices=PADDED_RULES,
        metavar="RULE",
        help=f"rules to show, of {', '.join(PADDED_RULES)} (default: the review table's {', '.join(CORE_RULES)})",
    )
    add(table, "--cases")
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
    add(reproduce, "--family", default=list(REPRO_FAMILIES))
    add(reproduce, "--rule")
    reproduce.add_argument(
        "--split-at",
        type=int,
        nargs="+",
        metavar="LAYER",
        help="first layer of each stage after the first: K gives two stages, "
        "K1 K2 three (default: half the layers; under torchrun, one stage per rank)",
    )
    reproduce.add_argument("--micro-batches", type=int, default=1, help="micro-batches per batch (default 1)")
    for flag in ("--device", "--distributed", "--dtype"):
        add(reproduce, flag)
    reproduce.add_argument(
        "--engine",
        choices=["pipelining", "deepspeed"],
        default="pipelining",
        help="pipelining (default): torch.distributed.pipelining, in this process or on ranks (--distributed); "
        "deepspeed: a DeepSpeed PipelineModule on CPU ranks it starts, one per stage (make deepspeed)",
    )
    reproduce.set_defaults(run=_reproduce)

    families = jobs.add_parser(
        "families",
        help="family x padding case x rule: does the two-stage pipeline match model.forward?",
        description="Run every family's two-stage pipeline with the rule of its ColossalAI 0.5.0 "
        "forward and with the fix on every padding case, and mark each row against model.forward.",
    )
    add(families, "--family", shown="all")
    for flag in ("--cases", "--rule", "--attn", "--distributed", "--device", "--dtype"):
        add(families, flag)
    families.set_defaults(run=_families)

    real = jobs.add_parser(
        "real-size",
        help="the bug on the shapes of real checkpoints (Llama-3.2-1B, Qwen2-0.5B, OPT-1.3B), or a local checkpoint",
        description="Build each family at the shape of a real checkpoint with random weights drawn on the device "
        "(nothing downloaded), or load a local checkpoint folder, and run 8 left-padded rows (real lengths from a "
        "tenth of the sequence to all of it) through two stages split at the middle layer, 2 micro-batches, with "
        "the fix (rightmost_non_pad) and the count rule; per family, the rows each matches model.forward and the "
        "largest difference. Real size needs a GPU: on the CPU the default is small shapes, one line says so.",
        options=_real_size_options,
    )
    real.set_defaults(run=_real_size)


def _real_size_options(real: argparse.ArgumentParser) -> None:
    from pp_demo.verify.real_size import REAL_SHAPES, SIZES  # the shapes load with their job only

    real.add_argument(
        "--families",
        nargs="+",
        choices=list(REAL_SHAPES),
        metavar="FAMILY",
        help=f"which shapes to build, not with --checkpoint (default and choices: {' '.join(REAL_SHAPES)})",
    )
    real.add_argument(
        "--size",
        choices=list(SIZES),
        help="real: 8 rows x 1024 tokens on the checkpoints' shapes; small: 8 x 64 on small shapes of the same "
        "structure (default: real on a GPU, small on the CPU)",
    )
    real.add_argument(
        "--checkpoint", metavar="DIR", help="a local checkpoint folder to run instead of the shapes (no hub)"
    )
    real.add_argument("--allow-cpu", action="store_true", help="run --size real on the CPU anyway (minutes, gigabytes)")
    add(real, "--device")
    add(real, "--dtype", default="bf16")
