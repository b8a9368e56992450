"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Folders by concern, each on the layers in its brackets: a layer imports from those and from what they
stand on, never from another (``tests/repo/test_import_rule.py``). Layers that stand on none of each
other are independent: ``training/``, ``bench/`` and ``exercises/`` know nothing of one another.

- ``errors``, ``bounds``, ``silent_imports``, ``output_paths`` [the standard library]: the input-error
  type; the bounds of the numbers a user types; imports that print nothing; where a command may write.
- ``pooling/`` [``errors``]: pooling rules, padding cases and the two references, the padding table.
- ``pipeline/`` [``pooling``, ``bounds``]: a model family as a row, the stage split, jobs, schedules,
  and ``run(jobs, on=...)``.
- ``verify/`` [``pipeline``, ``silent_imports``]: tolerances, comparison with ``model.forward``, where a
  row was pooled, the checker.
- ``colossalai/`` [``verify``, ``output_paths``]: ColossalAI 0.5.0's own forwards, its engine, the pull
  request's claims on its sdists.
- ``training/`` [``pipeline``]: training through the stages.
- ``bench/`` [``colossalai``]: the benchmark, pp_demo's engine beside ColossalAI's.
- ``figures/`` [``bench``]: the figures.
- ``workshop/`` [``figures``]: the room around the notebooks (doctor, lab, explorer).
- ``exercises/`` [``colossalai``]: the exercises and their judges.
- ``cli/`` [``training``, ``workshop``]: ``python -m pp_demo``, on top.

Every public name below loads from its one defining module, also reachable as ``pp_demo.NAME``.

This file and ``__main__.py`` parse on any Python, 2.7 included (no f-strings, no annotations):
``python -m pp_demo`` on a Python too old then says in one line which Python to use, instead of
ending in a SyntaxError (``tests/workshop/test_doctor.py``).
"""

import importlib

__version__ = "0.1.0"

# The public names load on first use, so `import pp_demo` (and `python -m pp_demo doctor`)
# needs only the standard library: the doctor must run where torch is missing and say so.
_HOMES = {
    "pooling.rules": ["FIX", "RULES", "CORE_RULES", "Rule", "get_rule", "pooled_positions", "count_minus_one"],
    "pooling.cases": ["CASES", "PAD", "REVIEW_TABLE", "PaddingCase", "as_batch", "get_case"],
    "workshop.tokenizer": ["tiny_tokenizer"],
    "pooling.survey": ["CLASSES", "RULE_CLASS", "SURVEY", "format_classes", "format_incidents", "format_survey"],
    "pooling.padding_table": ["RIGHT", "WRONG", "Verdict", "padding_table", "format_padding_table"],
    "pooling.packed": ["PACKED", "PackedBatch", "pack", "class_grid", "run_on_cases"],
    "pipeline.families": ["FAMILIES", "Family", "build_model", "get_family"],
    "pipeline.stages": ["Stages", "split_model"],
    "pipeline.jobs": ["Batch", "Fault", "Job", "Result", "micro_batches"],
    "pipeline.schedules": ["schedule_order", "timeline", "peak_in_flight", "gpipe_slots"],
    "pipeline.in_process": ["pipeline_logits", "fixed_pipeline"],
    "pipeline.on_rank": ["RankJob"],
    "pipeline.launch": ["PipelineError"],
    "pipeline.runner": ["run"],
    "verify.tolerances": ["tolerance"],
    "verify.compare": ["RowComparison", "compare_rows", "forward_logits", "reproduce", "reproduction_line"],
    "verify.family_matrix": ["pipeline_matrix", "format_matrix"],
    "verify.checker.judge": ["check_forward", "assert_matches_forward"],
    "verify.checker.report": ["Report"],
    "verify.onnx_export": ["PooledRows", "export_onnx", "run_onnx"],
    "colossalai.forwards": ["colossalai_forward", "colossalai_forwards", "pipeline_forward", "call_one_stage"],
    "colossalai.pull_request.sdists": ["split_patch"],
    "colossalai.pull_request.claims": ["first_pad_wrong"],
    "colossalai.pull_request.verify": ["format_verdicts"],
    "training.loop": ["TrainingBatch", "make_batches", "fresh_model", "train_unpipelined", "accuracy_by_side"],
    "training.study": ["RUNS", "StudySettings", "train_through_stages", "pad_sight", "outcome"],
    "figures.pooling": ["draw_padding_table", "draw_pad_eos_rows", "draw_row_diffs", "draw_class_grid"],
    "figures.schedules": ["draw_timeline"],
    "pipeline.engine_probes": ["OrderProbe", "ShapeTrapProbe"],
    "figures.study": ["draw_study_distributions", "draw_one_seed_curves"],
    "workshop.explorer": ["explore", "format_exploration", "exploration_html", "explorer_box"],
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}
__all__ = list(_WHERE)


def __getattr__(name):  # type: (str) -> object
    if name not in _WHERE:
        raise AttributeError("module 'pp_demo' has no attribute " + repr(name))
    return getattr(importlib.import_module("." + _WHERE[name], __name__), name)


def _notebook_errors():  # type: () -> None
    """In a Jupyter kernel, the package's errors as one line each (``pp_demo.workshop.cell_errors``)."""
    import sys

    if "ipykernel" in sys.modules:
        importlib.import_module(".workshop.cell_errors", __name__).install()


_notebook_errors()
