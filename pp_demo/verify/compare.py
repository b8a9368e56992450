"""Compare a pipeline's logits with ``model.forward``, row by row, and the reproduction.

``model.forward`` is the reference of *exactness*: a pipeline is right when it returns the
logits the unsplit model returns (whether ``model.forward`` itself pools the true last real
token is another question, judged in ``pp_demo.pooling.padding_table``). In bf16 or fp16 the
reference is ``model.forward`` of the same model in the same dtype on the same device, not an
fp32 forward (the rounding of the weights alone would move every row), and the dtype's
tolerance (``pp_demo.verify.tolerances``) covers the same arithmetic rounded in another order.
"""

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import torch

from pp_demo.bounds import seed_value, strings, tolerance_value
from pp_demo.core import FIX, as_batch, build_model, get_case, get_family, pipeline_logits
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import row_text
from pp_demo.ranks.torchrun_env import is_torchrun_rank, torchrun_world_size
from pp_demo.verify.tolerances import dtype_named, tolerance

__all__ = ["RowComparison", "forward_logits", "compare_rows", "REPRO_ROWS", "REPRO_FAMILIES", "reproduce"]
__all__ += [
    "reproduce_runs",
    "reproduction_header",
    "reproduction_line",
    "default_device",
    "pipeline_runs",
    "rules_for",
]

PipelineRun = tuple[torch.nn.Module, torch.Tensor, torch.Tensor, str]
"""``(model, input_ids, attention_mask, rule)``: one pipeline run of a comparison."""

REPRO_ROWS = ("left", "right")
"""The reproduction's batch: the left-padded row first, then the right-padded one."""

REPRO_FAMILIES = ("llama", "qwen2", "opt")
"""The reproduction's default families: those whose ColossalAI 0.5.0 pipeline forward counts
non-pad tokens, the bug of ColossalAI issue 6457. A literal (the families table may grow); the
tests check it against the table's ``colossalai_rule`` and the pull request's changed files."""


def default_device() -> str:
    # Asking warns on a machine with a CUDA driver too old or broken (the answer is then False):
    # the CPU it is, without a machine-dependent line on stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return "cuda" if torch.cuda.is_available() else "cpu"


@torch.no_grad()
def forward_logits(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """What the unsplit model returns: the reference."""
    if not isinstance(model, torch.nn.Module):  # a notebook's `model = None`, a model's name
        raise BadInput(f'model must be a model (build_model("llama"), say), got {type(model).__name__}')
    device = next(model.parameters()).device
    logits: torch.Tensor = model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device)).logits
    return logits


@dataclass(frozen=True)
class RowComparison:
    """One batch's rows against ``model.forward``'s logits (exactness): per row, whether the max
    |logit difference| is within ``atol``, and that difference.

    The package has four verdict types, each judging a different thing by a different reference:

    * this one: a batch's logits against ``model.forward``'s, within a tolerance (the
      reproduction, the family matrix, training);
    * ``pp_demo.pooling.padding_table.Verdict``: a rule's pooled *position* against a reference
      position (the true last real token, or where ``model.forward`` pools), exact integers with
      no model or logits, so it also judges rules no pipeline runs, and packed batches;
    * ``pp_demo.verify.checker.report.RowCheck``: one row of someone else's forward against
      ``model.forward``, plus what a ``RowComparison`` cannot know: where the row was pooled (the
      positions whose logits equal it) and the dtype whose rounding hides it;
    * the claims of ``pp_demo.instruments.pull_request.claims``: a sentence per claim of the pull
      request, judged from a JSON record that ColossalAI's own sdists wrote in another process.

    Each of the first three says right or wrong per row; one type for them would carry fields most
    tables have no value for (a position table has no logits, a comparison of logits no positions)."""

    matches: list[bool]
    max_abs_diff: list[float]
    atol: float

    @property
    def all_match(self) -> bool:
        return all(self.matches)


def compare_rows(logits: torch.Tensor, reference: torch.Tensor, atol: float) -> RowComparison:
    """Per row: does it match the reference within ``atol`` (finite, more than 0), and by how much it differs."""
    atol = tolerance_value(atol, "atol")
    if logits.shape != reference.shape:
        raise BadInput(
            f"logits of shape {tuple(logits.shape)} cannot be compared with "
            f"reference logits of shape {tuple(reference.shape)}"
        )
    # on the reference's device (a no-op where the pipeline ran beside it), read back once
    diff = (logits.to(reference.device).float() - reference.float()).abs().amax(-1).tolist()
    return RowComparison([d <= atol for d in diff], diff, atol)


def pipeline_runs(
    runs: Sequence[PipelineRun],
    on: Literal["process", "ranks"] = "process",
    split_points: int | tuple[int, ...] | None = None,
    n_micro: int = 1,
) -> list[tuple[torch.Tensor, str]] | None:
    """Each run's logits and the device type they were computed on. In this process, through the
    core's own door (``pp_demo.core.pipeline_logits``: one check of each run), the logits left on the
    model's device; on ranks, all runs in one start of the ranks (``pp_demo.ranks.runner.run``),
    which is loaded only then. ``None`` on a torchrun rank without results."""
    if on == "process":
        return [
            (pipeline_logits(model, ids, mask, rule, split_points, n_micro), next(model.parameters()).device.type)
            for model, ids, mask, rule in runs
        ]
    from pp_demo.ranks.jobs import Inference, Job
    from pp_demo.ranks.runner import run

    jobs = [Job.infer(m, ids, mask, rule=r, split_points=split_points, n_micro=n_micro) for m, ids, mask, r in runs]
    results = run(jobs, on=on)  # an ``on`` that is neither is refused there
    if results is None:
        return None
    return [(cast(Inference, result).logits, result.device) for result in results]


def rules_for(family: str, chosen: Sequence[str] | None = None) -> list[str]:
    """The rules a run of ``family`` compares: ``chosen`` when given, else the rule of its
    ColossalAI pipeline forward (where it has one), then the fix (once, where they are the same)."""
    colossalai = get_family(family).colossalai_rule
    default = [colossalai, FIX] if colossalai else [FIX]
    return list(dict.fromkeys(chosen or default))


def reproduce_runs(
    runs: Iterable[tuple[str, str]],
    split_points: int | tuple[int, ...] | None = None,
    n_micro: int = 1,
    on: Literal["process", "ranks"] = "process",
    seed: int = 0,
    device: str | None = None,
    rows: Sequence[str] = REPRO_ROWS,
    dtype: "torch.dtype | str" = torch.float32,
) -> list[RowComparison] | None:
    """The bug for each ``(family, rule)`` of ``runs``: a tiny seeded model split at
    ``split_points``, on the reproduction batch, all runs in one call of the runner
    (``on="ranks"``: one start of the ranks). Weights are drawn on the CPU in fp32 with
    ``seed``, then moved and cast to ``dtype``, so every device and precision runs the
    same model; the reference is its ``model.forward`` in that dtype, the tolerance by the
    pipeline's device and the dtype. ``None`` on a torchrun rank without results."""
    seed_value(seed, "seed")
    rows = strings(rows, "rows", '["left", "right"]')
    if not rows:
        raise BadInput(f"rows names the padding cases of the batch, at least one (default: {list(REPRO_ROWS)})")
    dtype = dtype_named(dtype)
    device = device or default_device()
    runs = list(runs)
    # build: one model per family; batch: the reproduction's rows
    models = {family: build_model(family, seed=seed).to(device=device, dtype=dtype) for family, _ in runs}
    ids, mask = as_batch(rows, device)
    # split and run: each (family, rule) through the core's pipeline, or all on one start of the ranks
    results = pipeline_runs([(models[f], ids, mask, r) for f, r in runs], on, split_points, n_micro)
    if results is None:
        return None
    # compare: each pipeline's rows with its model's forward, at the tolerance of its device and dtype
    compared = []
    for (family, _), (logits, ran_on) in zip(runs, results, strict=True):
        reference = forward_logits(models[family], ids, mask)
        compared.append(compare_rows(logits, reference, tolerance(ran_on, dtype)))
    return compared


def reproduction_header(split_points: Sequence[int] | None, distributed: bool, dtype: str = "fp32") -> str:
    """The lines above the reproduction's rows: the pipeline (how many stages, where they ran), the
    reference, the batch; on ranks that fell back to the CPU beside GPUs, why."""
    n = len(split_points) + 1 if split_points else 2
    if distributed and not split_points and is_torchrun_rank():  # one stage per rank torchrun started
        n = torchrun_world_size()
    count = {2: "two", 3: "three", 4: "four"}.get(n, str(n))
    if distributed:
        where = f"{count} ranks on torch.distributed.pipelining"
    else:
        where = "both stages in this process" if n == 2 else f"all {count} stages in this process"
    precision = "" if dtype == "fp32" else f", both in {dtype}"
    batch = ", ".join(f"{row_text(get_case(r).input_ids)} ({r}-padded)" for r in REPRO_ROWS)
    lines = [f"\nThe bug, reproduced: a {count}-stage pipeline ({where})"]
    lines += [f"against model.forward (the reference{precision})", f"batch: {batch}; pad id 0"]
    if distributed and (note := _ranks_note(n)):  # ranks on the CPU although there are GPUs, and why
        lines.append(note)
    return "\n".join(lines)


def _ranks_note(n_ranks: int) -> str | None:
    from pp_demo.ranks.launch import ranks_placement  # the ranks' machinery, for a run on ranks only

    return ranks_placement(n_ranks)[2]


def reproduce(
    family: str,
    rule: str = FIX,
    split_points: int | tuple[int, ...] | None = None,
    n_micro: int = 1,
    seed: int = 0,
    device: str | None = None,
    rows: Sequence[str] = REPRO_ROWS,
    dtype: "torch.dtype | str" = torch.float32,
) -> RowComparison:
    """The bug in one call, every stage in this process (``reproduce_runs`` for more)."""
    comparisons = reproduce_runs([(family, rule)], split_points, n_micro, "process", seed, device, rows, dtype)
    assert comparisons is not None  # in this process there is always a result
    return comparisons[0]


def reproduction_line(comparison: RowComparison) -> str:
    """The agreed output format of the reproduction, one line per run."""
    return f"row matches model.forward: {comparison.matches}"
