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


from .cases import CASES, as_batch
from .compare import compare_rows, forward_logits
from .families import FAMILIES, build_model, get_family
from .jobs import Job
from .rules import FIX
from .runner import run
from .table import NO_ANSWER, RIGHT, WRONG
from .tolerance import tolerance

__all__ = ["matrix_runs", "pipeline_matrix", "format_matrix"]


def _by_length(cases):
    groups = defaultdict(list)
    for name in cases:
        groups[CASES[name].length].append(name)
    return list(groups.values())


def matrix_runs(families=None, cases=None, rules=None, attn_implementation=None):
    """The runs behind the table: ``(family, rule, case names, model, ids, mask)``, cases of
    one length batched together so each family and rule runs once per length."""
    families = list(families or FAMILIES)
    cases = list(cases or CASES)
    runs = []
    for family in families:
        model = build_model(family, attn_implementation=attn_implementation)
        for rule in dict.fromkeys(rules or [get_family(family).colossalai_rule, FIX]):
            for group in _by_length(cases):
                ids, mask = as_batch(group)
                runs.append((family, rule, group, model, ids, mask))
    return runs


def pipeline_matrix(families=None, cases=None, rules=None, attn_implementation=None, on="process",
                    split_points=None):
    """``{(family, rule, case): matches model.forward}``.

    ``on`` is the runner's (``pp_demo.runner.run``): ``"ranks"`` runs every run of the
    table in one start of the ranks; under torchrun, a rank without results returns ``None``.
    """
    runs = matrix_runs(families, cases, rules, attn_implementation)
    results = run([Job.infer(model, ids, mask, rule=rule, split_points=split_points)
                   for _, rule, _, model, ids, mask in runs], on=on)
    if results is None:
        return None
    table = {}
    for (family, rule, group, model, ids, mask), result in zip(runs, results):
        compared = compare_rows(result.logits, forward_logits(model, ids, mask), tolerance(result.device))
        for case, match in zip(group, compared.matches):
            table[family, rule, case] = match
    return table


def format_matrix(table):
    """Rows family/rule, columns cases; the reference is named on top."""
    cases = list(dict.fromkeys(case for _, _, case in table))
    rows = list(dict.fromkeys((family, rule) for family, rule, _ in table))
    widths = [max(len(c), 3) for c in cases]
    lines = [f"judged by model.forward (exactness): {RIGHT} the pipeline's logits equal it, {WRONG} they differ",
             "",
             f"{'family':<8} {'rule':<18} " + " ".join(f"{c:>{w}}" for c, w in zip(cases, widths))]
    for family, rule in rows:
        marks = [table.get((family, rule, c)) for c in cases]
        cells = " ".join(f"{NO_ANSWER if m is None else (RIGHT if m else WRONG):>{w}}" for m, w in zip(marks, widths))
        lines.append(f"{family:<8} {rule:<18} {cells}")
    return "\n".join(lines)
