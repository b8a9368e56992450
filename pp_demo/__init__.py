"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Modules, each one concept, imports flowing one way (a module imports only modules listed
before it):

1. ``quiet`` (imports that print nothing), ``doctor`` (the preflight), ``lab`` (``make lab``),
   ``palette`` (the figures' colour-blind-safe colours): standard library only.
2. ``rules`` (pooling rules) -> ``cases`` (padding cases, two references) -> ``tokenizer`` (a
   tiny tokenizer for the cases) -> ``survey`` (where the rules are found in the wild) ->
   ``table`` (rule x case verdicts) -> ``packed`` (packed batches, the class grid) ->
   ``families`` (a model family as a row).
3. ``stages`` (the split at given layers) -> ``jobs`` (what to run, what comes back) ->
   ``schedules`` (GPipe and 1F1B order per rank) -> ``local`` (every stage in one process) ->
   ``ranks`` (what one rank runs on ``torch.distributed.pipelining``) -> ``distributed``
   (starting the ranks) -> ``runner`` (``run(jobs, on=...)``, the one way in) ->
   ``engine_probes`` (what the engine really runs: its order, its shape trap).
4. ``tolerances`` (when logits count as equal) -> ``compare`` (against ``model.forward``) ->
   ``matrix`` (family x rule x case) -> ``battery`` (the checker's batches) -> ``checker``
   (any framework's forward) -> ``onnx_export`` -> ``colossalai_compat`` /
   ``colossalai_trees`` (ColossalAI 0.5.0) -> ``pr_claims`` / ``verify_pr_worker`` /
   ``verify_pr`` (the pull request, claim by claim).
5. ``training`` -> ``training_study`` (over seeds) -> ``bench`` -> ``figures`` /
   ``schedule_figures`` / ``study_figures`` (matplotlib) -> ``explorer`` (a row of your own) -> ``solutions`` ->
   ``exercises`` -> ``cli`` (``python -m pp_demo``).

Every public name below loads from its one defining module, also reachable as ``pp_demo.NAME``.
"""

import importlib
from typing import Any

__version__ = "0.1.0"

# The public names load on first use, so `import pp_demo` (and `python -m pp_demo doctor`)
# needs only the standard library: the doctor must run where torch is missing and say so.
_HOMES = {
    "rules": ["FIX", "RULES", "CORE_RULES", "Rule", "get_rule", "pooled_positions", "count_minus_one"],
    "cases": ["CASES", "PAD", "REVIEW_TABLE", "PaddingCase", "as_batch", "get_case"],
    "tokenizer": ["tiny_tokenizer"],
    "survey": ["CLASSES", "RULE_CLASS", "SURVEY", "format_classes", "format_incidents", "format_survey"],
    "table": ["RIGHT", "WRONG", "Verdict", "padding_table", "format_padding_table"],
    "packed": ["PACKED", "PackedBatch", "pack", "class_grid", "run_on_cases"],
    "families": ["FAMILIES", "Family", "build_model", "get_family"],
    "stages": ["Stages", "split_model"],
    "jobs": ["Batch", "Fault", "Job", "Result", "micro_batches"],
    "schedules": ["schedule_order", "timeline", "peak_in_flight", "gpipe_slots"],
    "local": ["pipeline_logits", "fixed_pipeline"],
    "ranks": ["RankJob"],
    "distributed": ["PipelineError"],
    "runner": ["run"],
    "tolerances": ["tolerance"],
    "compare": ["RowComparison", "compare_rows", "forward_logits", "reproduce", "reproduction_line"],
    "matrix": ["pipeline_matrix", "format_matrix"],
    "checker": ["Report", "check_forward", "assert_matches_forward"],
    "onnx_export": ["PooledRows", "export_onnx", "run_onnx"],
    "colossalai_compat": ["colossalai_forward", "colossalai_forwards", "pipeline_forward", "call_one_stage"],
    "colossalai_trees": ["split_patch"],
    "pr_claims": ["first_pad_wrong"],
    "verify_pr": ["format_verdicts"],
    "training": ["TrainingBatch", "make_batches", "fresh_model", "train_unpipelined", "accuracy_by_side"],
    "training_study": ["RUNS", "StudySettings", "train_through_stages", "pad_sight", "outcome"],
    "figures": ["draw_padding_table", "draw_pad_eos_rows", "draw_row_diffs", "draw_class_grid"],
    "schedule_figures": ["draw_timeline"],
    "engine_probes": ["OrderProbe", "ShapeTrapProbe"],
    "study_figures": ["draw_study_distributions", "draw_one_seed_curves"],
    "explorer": ["explore", "format_exploration", "exploration_html"],
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'pp_demo' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
