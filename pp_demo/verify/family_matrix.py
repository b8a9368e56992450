"""The family x padding case x rule table: does the pipeline match ``model.forward``?

Judged by ``model.forward`` (exactness), row by row. Each family runs with the rule of
its ColossalAI 0.5.0 pipeline forward and with the fix, on every padding case:

* the count rule (llama, qwen2, opt) misses left-padded rows and rows with a pad id
  among their real tokens;
* the first-pad rule (gpt2, bloom, falcon, gptj wrapped; mistral unwrapped) is right on
  plain left or right padding and misses the right-padded row with a pad id among its
  real tokens (pad == eos);
* the fix matches everywhere, the all-pad and trailing-eos rows included (it *is*
  what ``model.forward`` does; whether that is the true last token is ``table``'s question).
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import torch

from pp_demo.pipeline.families import FAMILIES, build_model, rules_for
from pp_demo.pipeline.jobs import Inference, Job
from pp_demo.pipeline.runner import run
from pp_demo.pooling.cases import CASES, as_batch
from pp_demo.pooling.padding_table import RIGHT, WRONG, mark
from pp_demo.verify.compare import compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance

__all__ = ["matrix_runs", "pipeline_matrix", "format_matrix"]

Matrix = dict[tuple[str, str, str], bool]
"""``{(family, rule, case): whether the pipeline's row equals model.forward's}``."""


def _by_length(cases: Iterable[str]) -> list[list[str]]:
    groups: defaultdict[int, list[str]] = defaultdict(list)
    for name in cases:
        groups[CASES[name].length].append(name)
    return list(groups.values())


MatrixRun = tuple[str, str, list[str], Any, torch.Tensor, torch.Tensor]
"""One run behind the table: ``(family, rule, case names, model, input_ids, attention_mask)``
(not ``pp_demo.training.study.Run``, which is a run of the training study)."""


def matrix_runs(
    families: Sequence[str] | None = None,
    cases: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    attn_implementation: str | None = None,
) -> list[MatrixRun]:
    """The runs behind the table: ``(family, rule, case names, model, ids, mask)``, cases of
    one length batched together so each family and rule runs once per length."""
    runs: list[MatrixRun] = []
    for family in list(families or FAMILIES):
        model = build_model(family, attn_implementation=attn_implementation)
        for rule in rules_for(family, rules):
            for group in _by_length(list(cases or CASES)):
                ids, mask = as_batch(group)
                runs.append((family, rule, group, model, ids, mask))
    return runs


def pipeline_matrix(
    families: Sequence[str] | None = None,
    cases: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    attn_implementation: str | None = None,
    on: Literal["process", "ranks"] = "process",
    split_points: int | tuple[int, ...] | None = None,
) -> Matrix | None:
    """``{(family, rule, case): matches model.forward}``.

    ``on`` is the runner's (``pp_demo.pipeline.runner.run``): ``"ranks"`` runs every run of the
    table in one start of the ranks; under torchrun, a rank without results returns ``None``.
    """
    runs = matrix_runs(families, cases, rules, attn_implementation)
    results = run(
        [Job.infer(model, ids, mask, rule=rule, split_points=split_points) for _, rule, _, model, ids, mask in runs],
        on=on,
    )
    if results is None:
        return None
    table: Matrix = {}
    for (family, rule, group, model, ids, mask), result in zip(runs, results, strict=True):
        assert isinstance(result, Inference)  # an inference job's result
        compared = compare_rows(result.logits, forward_logits(model, ids, mask), tolerance(result.device))
        for case, match in zip(group, compared.matches, strict=True):
            table[family, rule, case] = match
    return table


def format_matrix(table: Matrix) -> str:
    """Rows family/rule, columns cases; the reference is named on top."""
    cases = list(dict.fromkeys(case for _, _, case in table))
    rows = list(dict.fromkeys((family, rule) for family, rule, _ in table))
    widths = [max(len(c), 3) for c in cases]
    lines = [
        f"judged by model.forward (exactness): {RIGHT} the pipeline's logits equal it, {WRONG} they differ",
        "",
        f"{'family':<8} {'rule':<18} " + " ".join(f"{c:>{w}}" for c, w in zip(cases, widths, strict=True)),
    ]
    for family, rule in rows:
        marks = [table.get((family, rule, c)) for c in cases]
        cells = " ".join(f"{mark(m):>{w}}" for m, w in zip(marks, widths, strict=True))
        lines.append(f"{family:<8} {rule:<18} {cells}")
    return "\n".join(lines)
