"""The public API: the core's names as ``pp_demo.NAME``; every public name of every module at one
import path, and annotated.

The module map in the package docstring and the import rule are tested in
``tests/repo/test_import_rule.py``."""

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

import pp_demo

PACKAGE = Path(pp_demo.__file__).parent
FOLDERS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))  # pooling, pipeline, ...
# What `pp_demo.X` can also name once imported: a top-level module or a folder.
TOP_LEVEL = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")) + FOLDERS
# Every module, as pp_demo.MODULE names it: "pooling.rules", "cli", "bench" (a folder's __init__).
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
    if p.name != "__main__.py" and p != PACKAGE / "__init__.py"
)


def test_no_public_name_is_also_a_module_name():
    # importing pp_demo.X sets the package's attribute X to the module, which would then
    # hide a public name X (a function) from `pp_demo.X` and `from pp_demo import X`
    assert sorted(set(pp_demo.__all__) & set(TOP_LEVEL)) == []


# What the notebooks, the README and the docs import besides the core's names, each from the module
# whose path says who it is for. (Other modules' ``__all__`` may share a name: a command's ``main``.)
HOMES = {
    "pooling.positions": ["pooled_positions"],
    "workshop.tokenizer": ["tiny_tokenizer"],
    "pooling.survey": ["CLASSES", "RULE_CLASS", "SURVEY", "format_classes", "format_incidents", "format_survey"],
    "pooling.padding_table": ["RIGHT", "WRONG", "Verdict", "padding_table", "format_padding_table"],
    "pooling.packed": ["PACKED", "PackedBatch", "pack", "class_grid", "run_on_cases"],
    "ranks.jobs": ["Batch", "Fault", "Job", "TrainingJob", "Result"],
    "ranks.schedules": ["schedule_order", "timeline", "peak_in_flight", "gpipe_slots"],
    "ranks.in_process": ["fixed_pipeline"],
    "ranks.on_rank": ["RankJob"],
    "ranks.launch": ["PipelineError"],
    "ranks.runner": ["run"],
    "verify.tolerances": ["tolerance"],
    "verify.compare": ["RowComparison", "compare_rows", "forward_logits", "reproduce", "reproduction_line"]
    + ["pipeline_runs", "rules_for"],
    "verify.family_matrix": ["pipeline_matrix", "format_matrix"],
    "verify.checker.judge": ["check_forward", "assert_matches_forward"],
    "verify.checker.report": ["Report"],
    "verify.onnx_export": ["PooledRows", "export_onnx", "run_onnx"],
    "colossalai.forwards": ["colossalai_forward", "colossalai_forwards", "pipeline_forward", "call_one_stage"],
    "instruments.pull_request.sdists": ["split_patch"],
    "instruments.pull_request.claims": ["first_pad_wrong"],
    "records.bench": ["load_results", "micro_batch"],
    "records.engine": ["verdict_lines"],
    "records.pull_request": ["format_verdicts", "changed_lines", "claim_batches"],
    "training.loop": ["TrainingBatch", "make_batches", "fresh_model", "train_unpipelined", "accuracy_by_side"],
    "training.study": ["RUNS", "StudySettings", "train_through_stages", "pad_sight", "outcome"],
    "figures.pooling": ["draw_padding_table", "draw_pad_eos_rows", "draw_row_diffs", "draw_class_grid"],
    "figures.schedules": ["draw_timeline"],
    "ranks.engine_probes": ["OrderProbe", "ShapeTrapProbe"],
    "figures.study": ["draw_study_distributions", "draw_one_seed_curves"],
    "workshop.explorer": ["explore", "format_exploration", "exploration_html", "explorer_box"],
}
PUBLIC = [("core", n) for n in pp_demo.__all__] + [(m, n) for m, names in HOMES.items() for n in names]


def test_the_package_names_are_the_cores():
    from pp_demo import core

    # the core has no __all__: every name it defines without an underscore is public
    public = {name for name, value in vars(core).items() if not name.startswith("_") and name.isidentifier()}
    assert set(pp_demo.__all__) <= public
    assert all(getattr(pp_demo, name) is getattr(core, name) for name in pp_demo.__all__)
    assert {"build_model", "split_model", "pipeline_logits", "CASES", "FAMILIES", "RULES"} <= set(pp_demo.__all__)


@pytest.mark.parametrize("home, name", PUBLIC)
def test_each_public_name_has_one_home(home, name):
    obj = getattr(importlib.import_module(f"pp_demo.{home}"), name)
    others = [
        m
        for m in MODULES
        if m not in (home, "cli")
        and m.split(".")[0] != "exercises"
        and name in getattr(importlib.import_module(f"pp_demo.{m}"), "__all__", ())
    ]
    assert others == [], f"{name} is also exported by {others}"
    if inspect.isfunction(obj) or inspect.isclass(obj):
        assert obj.__module__ == f"pp_demo.{home}"


def _unannotated(function):
    signature = inspect.signature(function)
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


@pytest.mark.parametrize("home, name", PUBLIC)
def test_each_public_function_class_and_field_is_annotated(home, name):
    obj = getattr(importlib.import_module(f"pp_demo.{home}"), name)
    if inspect.isfunction(obj):
        assert _unannotated(obj) == [], name
    elif inspect.isclass(obj):
        if dataclasses.is_dataclass(obj):
            assert all(f.type is not None for f in dataclasses.fields(obj))
        for attribute, member in vars(obj).items():
            if attribute.startswith("_") and attribute != "__init__":
                continue
            if isinstance(member, property):
                member = member.fget
            elif isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if inspect.isfunction(member) and member.__qualname__.startswith(obj.__name__):
                assert _unannotated(member) == [], f"{name}.{attribute}"


def test_an_unannotated_function_is_caught_by_the_annotation_check():
    def bare(x, y: int):
        return x

    assert _unannotated(bare) == ["x", "return"]
