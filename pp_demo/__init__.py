"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Start with ``core.py``: the pooling rules, the padding cases, the family table, the stage split and
the in-process pipeline, in one file read top to bottom. Around it, by who reads it (docs/architecture.md).
Each layer imports from the layers in its brackets and what they stand on, never from another
(``tests/repo/test_import_rule.py``):

- ``errors``, ``bounds``, ``silent_imports``, ``output_paths`` [the standard library]: refusals in one line.
- ``core`` [``errors``]: the learner's core.
- ``pooling/`` [``core``]: the rules' checked door, the padding table, packed batches, the survey.
- ``ranks/`` [``pooling``, ``bounds``]: ``run(jobs, on=...)`` on torch's pipelining engine; schedules.
- ``verify/`` [``ranks``, ``silent_imports``]: comparison with ``model.forward``; the checker.
- ``colossalai/`` [``verify``, ``output_paths``]: ColossalAI 0.5.0's own code, its engine, its pull request.
- ``training/`` [``ranks``]: training through the stages; the study over seeds.
- ``bench/`` [``colossalai``]: the benchmark.
- ``figures/`` [``bench``]: the figures.
- ``workshop/`` [``figures``]: the room: doctor, lab, explorer, GPU check.
- ``exercises/`` [``colossalai``]: the exercises and their judges.
- ``cli/`` [``training``, ``workshop``]: ``python -m pp_demo``, on top.

Every public name loads from its one home on first use, also as ``pp_demo.NAME``; this file and
``__main__.py`` parse on any Python (``python -m pp_demo`` on one too old says which to use).
"""

import importlib

__version__ = "0.1.0"

# The public names load on first use, so `import pp_demo` (and `python -m pp_demo doctor`)
# needs only the standard library: the doctor must run where torch is missing and say so.
_HOMES = {
    "core": [
        "FIX",
        "RULES",
        "CORE_RULES",
        "Rule",
        "get_rule",
        "count_minus_one",
        "CASES",
        "PAD",
        "REVIEW_TABLE",
        "PaddingCase",
        "as_batch",
        "get_case",
        "FAMILIES",
        "Family",
        "build_model",
        "get_family",
        "Stages",
        "split_model",
        "pipeline_logits",
        "micro_batches",
    ],
    "pooling.positions": ["pooled_positions"],
    "workshop.tokenizer": ["tiny_tokenizer"],
    "pooling.survey": ["CLASSES", "RULE_CLASS", "SURVEY", "format_classes", "format_incidents", "format_survey"],
    "pooling.padding_table": ["RIGHT", "WRONG", "Verdict", "padding_table", "format_padding_table"],
    "pooling.packed": ["PACKED", "PackedBatch", "pack", "class_grid", "run_on_cases"],
    "ranks.jobs": ["Batch", "Fault", "Job", "Result"],
    "ranks.schedules": ["schedule_order", "timeline", "peak_in_flight", "gpipe_slots"],
    "ranks.in_process": ["fixed_pipeline"],
    "ranks.on_rank": ["RankJob"],
    "ranks.launch": ["PipelineError"],
    "ranks.runner": ["run"],
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
    "ranks.engine_probes": ["OrderProbe", "ShapeTrapProbe"],
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
