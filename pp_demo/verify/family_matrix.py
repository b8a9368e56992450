"""The family x padding case x rule table: does the pipeline match ``model.forward``?

Judged by ``model.forward`` (exactness), row by row. Each family runs with the rule of its
ColossalAI 0.5.0 pipeline forward and with the fix, on every padding case:

* the count rule (llama, qwen2, opt) misses left-padded rows and those with a pad id among
  their real tokens;
* the first-pad rule (gpt2, bloom, falcon, gptj wrapped; mistral unwrapped) is right on
  plain left or right padding and misses the right-padded row with a pad id among its real
  tokens (pad == eos);
* the fix matches everywhere, the all-pad and trailing-eos rows included (it *is* what
  ``model.forward`` does; whether that is the true last token is ``table``'s question).
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

import torch

from pp_demo.core import CASES, FAMILIES, as_batch, build_model
from pp_demo.errors import BadInput
from pp_demo.pooling.padding_table import RIGHT, WRONG, mark, two_line_heading
from pp_demo.verify.compare import compare_rows, forward_logits, pipeline_runs, rules_for
from pp_demo.verify.tolerances import tolerance

__all__ = [
    "attention_families",
    "pipeline_differences",
    "pipeline_matrix",
    "closest_calls",
    "format_matrix",
]

Matrix = dict[tuple[str, str, str], bool]
"""``{(family, rule, case): whether the pipeline's row equals model.forward's}``."""

Differences = dict[tuple[str, str, str], float]
"""``{(family, rule, case): max |logit difference| between the pipeline's row and model.forward's}``."""


def _attention_refused(family: str, attn_implementation: str | None) -> BadInput | None:
    """The line for a family whose transformers classifier has no ``attn_implementation`` (BLOOM
    has no sdpa, nor GPT-J before transformers 5), or None: transformers says so in a ValueError
    with a link, raised as the model is built."""
    if attn_implementation is None:
        return None
    try:
        build_model(family, attn_implementation=attn_implementation)
    except BadInput:
        raise
    except ValueError:
        import transformers

        version = transformers.__version__
        return BadInput(
            f"--attn {attn_implementation}: {family}'s classifier has no {attn_implementation} attention in "
            f"transformers {version}; leave --attn out, or give --attn eager"
        )
    return None


def attention_families(families: Sequence[str], attn_implementation: str | None) -> tuple[list[str], list[str]]:
    """``(families that take attn_implementation, those that do not)``: a table of every family
    with ``--attn sdpa`` runs the ones that can and names the others."""
    refused = [family for family in families if _attention_refused(family, attn_implementation)]
    return [family for family in families if family not in refused], refused


def pipeline_differences(
    families: Sequence[str] | None = None,
    cases: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    attn_implementation: str | None = None,
    on: Literal["process", "ranks"] = "process",
    split_points: int | tuple[int, ...] | None = None,
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> tuple[Differences, float] | None:
    """The numbers behind ``pipeline_matrix`` (``Differences``) and the shared tolerance
    they are judged by (by the device the pipeline ran on and ``dtype``). The reference is
    ``model.forward`` of the same model in the same dtype (``pp_demo.verify.compare``)."""
    # (family, rule, case names, model, ids, mask): cases of one length batched together, so each
    # family and rule runs once per length; weights drawn on the CPU in fp32, then moved and cast
    by_length: defaultdict[int, list[str]] = defaultdict(list)
    for name in cases or CASES:
        by_length[CASES[name].length].append(name)
    runs = []
    for family in list(families or FAMILIES):
        refused = _attention_refused(family, attn_implementation)
        if refused is not None:
            raise refused
        model = build_model(family, attn_implementation=attn_implementation).to(device=device, dtype=dtype)
        for rule in rules_for(family, rules):
            runs += [(family, rule, group, model, *as_batch(group, device)) for group in by_length.values()]
    results = pipeline_runs([(model, ids, mask, rule) for _, rule, _, model, ids, mask in runs], on, split_points)
    if results is None:
        return None
    differences: Differences = {}
    atol = tolerance(device, dtype)
    for (family, rule, group, model, ids, mask), (logits, ran_on) in zip(runs, results, strict=True):
        atol = tolerance(ran_on, dtype)
        compared = compare_rows(logits, forward_logits(model, ids, mask), atol)
        for case, diff in zip(group, compared.max_abs_diff, strict=True):
            differences[family, rule, case] = diff
    return differences, atol


def pipeline_matrix(
    families: Sequence[str] | None = None,
    cases: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    attn_implementation: str | None = None,
    on: Literal["process", "ranks"] = "process",
    split_points: int | tuple[int, ...] | None = None,
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> Matrix | None:
    """``Matrix``: each difference within the tolerance (``compare_rows``'s rule). ``on`` is the
    runner's (``pp_demo.ranks.runner.run``): ``"ranks"`` runs the whole table in one start of
    the ranks; under torchrun, a rank without results returns ``None``."""
    found = pipeline_differences(families, cases, rules, attn_implementation, on, split_points, device, dtype)
    if found is None:
        return None
    differences, atol = found
    return {cell: diff <= atol for cell, diff in differences.items()}


def closest_calls(differences: Differences, atol: float) -> str:
    """Two lines: the largest difference counted as a match and the smallest counted as a miss.
    In half precision the tolerance (1e-2) is coarse, and the tiny models' bug moves some
    rows by only 0.047: these lines show how close the table's verdicts came."""
    lines = []
    for verdict, cells, pick in [
        ("largest difference counted as a match", [c for c, d in differences.items() if d <= atol], max),
        ("smallest difference counted as a miss", [c for c, d in differences.items() if d > atol], min),
    ]:
        if cells:
            cell = pick(cells, key=differences.__getitem__)
            lines.append(f"{verdict} (tolerance {atol:g}): {differences[cell]:.3f}, {' '.join(cell)}")
    return "\n".join(lines)


def format_matrix(table: Matrix) -> str:
    """Rows family/rule, columns cases (headings over two lines); the reference is named on top."""
    cases = list(dict.fromkeys(case for _, _, case in table))
    rows = list(dict.fromkeys((family, rule) for family, rule, _ in table))
    headings = [two_line_heading(c) for c in cases]
    widths = [max(len(top), len(bottom), 3) for top, bottom in headings]
    family_w = max(len(name) for name in ["family", *(family for family, _ in rows)])
    rule_w = max(len(name) for name in ["rule", *(rule for _, rule in rows)])

    def line(family: str, rule: str, cells: Iterable[str]) -> str:
        row = "".join(f"  {cell:>{w}}" for cell, w in zip(cells, widths, strict=True))
        return f"{family:<{family_w}} {rule:<{rule_w}}{row}"

    lines = [
        f"judged by model.forward (exactness): {RIGHT} the pipeline's logits equal it, {WRONG} they differ",
        "",
        line("", "", (top for top, _ in headings)).rstrip(),
        line("family", "rule", (bottom for _, bottom in headings)),
    ]
    lines += [line(family, rule, (mark(table.get((family, rule, c))) for c in cases)) for family, rule in rows]
    return "\n".join(lines)
