"""The room's commands: ``doctor`` (its options and checks live in ``pp_demo.workshop.doctor``,
which ``python -m pp_demo doctor`` runs without torch) and ``gpu-check``."""

import argparse
from collections.abc import Callable
from typing import Any

from pp_demo.cli.options import add


def _doctor_options(doctor: argparse.ArgumentParser) -> None:
    from pp_demo.workshop.doctor import add_doctor_options  # loaded for the doctor's own parser only

    add_doctor_options(doctor)


def _gpu_check(args: argparse.Namespace, build_parser: Callable[[], argparse.ArgumentParser]) -> int:
    from pp_demo.workshop.gpu_check import run_check

    return run_check(args, build_parser())


def add_room_jobs(jobs: Any, build_parser: Callable[[], argparse.ArgumentParser]) -> None:
    """``build_parser``: the whole command line's, which gpu-check reads for the jobs this tree has."""
    jobs.add_parser(
        "doctor", help="check this machine before the workshop (runs without torch)", options=_doctor_options
    )
    gpu = jobs.add_parser(
        "gpu-check",
        help="every GPU path once, on a GPU box (docs/gpu.md); installs nothing",
        description="On a GPU box: doctor, reproduce on cuda and on two NCCL ranks, families on cuda (each against "
        "the same job on the CPU), the ColossalAI engine in bf16 and fp16, the real-size reproduction and the "
        "in-process pipeline's speed against model.forward (their lines kept), the notebooks under strict nbval; one "
        "timeout a step; a failed step keeps its first error whole. A missing JupyterLab is reported, not failed. "
        "Prints one table, writes the record, exit 1 if a step failed. Installs nothing. Without a GPU: one line, "
        "exit 0, nothing written.",
    )
    gpu.add_argument("--dry-run", action="store_true", help="print the steps and run none")
    add(gpu, "--out", what="the record: a file, or a folder to write gpu_check.json in", shown="results/gpu_check.json")
    where = "the checkout each step runs in, its notebooks/ too (default: the current folder)"
    gpu.add_argument("--checkout", default=".", help=where)
    gpu.set_defaults(run=lambda args: _gpu_check(args, build_parser))
