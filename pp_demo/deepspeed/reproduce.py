"""The bug on DeepSpeed's pipeline engine: each rule's rows against ``model.forward``, and training.

Every case runs on ranks started once per rank count (``run_on_deepspeed``); the reference is the unsplit
model's own forward, built here from the same seed, so nothing the engine computes judges itself.
"""

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from pp_demo.core import as_batch, build_model, get_case, plan_run
from pp_demo.deepspeed import missing
from pp_demo.deepspeed.launch import failure, start_ranks
from pp_demo.deepspeed.on_rank import EngineCase
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import format_padding_table, row_text
from pp_demo.verify.compare import REPRO_ROWS, RowComparison, compare_rows, forward_logits, reproduction_line
from pp_demo.verify.tolerances import dtype_named, tolerance

__all__ = [
    "run_on_deepspeed",
    "reproduce_on_deepspeed",
    "train_on_deepspeed",
    "engine_header",
    "print_deepspeed_reproduction",
]


def _ranks(case: EngineCase) -> int:
    """The case's stages, one per rank; its plan checked here, before any rank starts (the core's one check of each)."""
    model = build_model(case.family, seed=case.seed)
    plan = plan_run(model, case.input_ids, case.attention_mask, case.rule, case.split_points, case.n_micro)
    return len(plan.split_points) + 1


def run_on_deepspeed(cases: Sequence[EngineCase], timeout_s: float = 300) -> list[Any]:
    """Each case's answer (logits, or losses per step), in order: the ranks start once per rank count."""
    by_count: dict[int, list[int]] = {}
    for i, case in enumerate(cases):
        by_count.setdefault(_ranks(case), []).append(i)
    answers: list[Any] = [None] * len(cases)
    for n_ranks, indices in by_count.items():
        with tempfile.TemporaryDirectory(prefix="pp_demo_deepspeed_") as folder:
            torch.save([cases[i] for i in indices], Path(folder, "cases.pt"))
            codes = start_ranks(["-m", "pp_demo.deepspeed.on_rank", folder], n_ranks, timeout_s, folder)
            if any(codes) or not Path(folder, "answers.pt").exists():
                raise failure(folder, codes)
            for i, answer in zip(indices, torch.load(Path(folder, "answers.pt")), strict=True):
                answers[i] = answer
    return answers


def reproduce_on_deepspeed(
    runs: Iterable[tuple[str, str]],
    split_points: tuple[int, ...] | None = None,
    n_micro: int = 1,
    rows: Sequence[str] = REPRO_ROWS,
    timeout_s: float = 300,
) -> list[RowComparison]:
    """For each ``(family, rule)``: the engine's logits on ``rows`` against the model's own forward."""
    runs = list(runs)
    ids, mask = as_batch(rows)
    cases = [EngineCase(f, r, ids, mask, split_points=split_points, n_micro=n_micro) for f, r in runs]
    compared = []
    for (family, _), logits in zip(runs, run_on_deepspeed(cases, timeout_s), strict=True):
        reference = forward_logits(build_model(family), ids, mask)
        compared.append(compare_rows(logits, reference, tolerance("cpu", torch.float32)))
    return compared


def train_on_deepspeed(
    family: str, rules: Sequence[str], labels: Sequence[int], steps: int = 3, lr: float = 1e-2, timeout_s: float = 300
) -> dict[str, list[float]]:
    """``steps`` of ``train_batch`` with each rule on the reproduction rows: the loss of every step."""
    ids, mask = as_batch(REPRO_ROWS)
    target = torch.tensor(list(labels), dtype=torch.long)
    cases = [EngineCase(family, rule, ids, mask, target, steps=steps, lr=lr) for rule in rules]
    return dict(zip(rules, run_on_deepspeed(cases, timeout_s), strict=True))


def engine_header(n_stages: int = 2) -> str:
    """The lines above the rows, as ``pp_demo.verify.compare.reproduction_header`` writes them for torch's engine."""
    count = {2: "two", 3: "three", 4: "four"}.get(n_stages, str(n_stages))
    batch = ", ".join(f"{row_text(get_case(r).input_ids)} ({r}-padded)" for r in REPRO_ROWS)
    return "\n".join(
        [
            f"\nThe bug, reproduced: a {count}-stage pipeline ({count} CPU ranks on DeepSpeed's PipelineModule)",
            "against model.forward (the reference)",
            f"batch: {batch}; pad id 0",
        ]
    )


def print_deepspeed_reproduction(
    runs: Sequence[tuple[str, str]], split_points: tuple[int, ...] | None, n_micro: int, dtype: str, device: str | None
) -> int:
    """``python -m pp_demo reproduce --engine deepspeed``: the padding table, then a line per run."""
    on_cpu = device is None or torch.device(device).type == "cpu"  # a device the command line checked
    if dtype_named(dtype) != torch.float32 or not on_cpu:
        raise BadInput("--engine deepspeed runs on CPU ranks in fp32: leave out --dtype and --device")
    if (why := missing()) is not None:
        raise BadInput(why)
    compared = reproduce_on_deepspeed(runs, split_points, n_micro)
    print(format_padding_table(reference="true_last"))
    print(engine_header(len(split_points) + 1 if split_points else 2))
    for (family, rule), comparison in zip(runs, compared, strict=True):
        print(f"{family:<8} {rule:<18} {reproduction_line(comparison)}")
    return 0
