"""Every figure the workbook draws reads on a projector: at most ``MAX_WIDTH_IN`` wide and
``MAX_HEIGHT_IN`` tall (the legend and the last panel on one laptop screen), every text at
``PROJECTOR_PT`` or more and inside the figure, no panel narrower than ``MIN_PANEL_IN``, the key a legend,
and a raw -1 never written next to a minus-like mark. The ``draw_*`` functions are enumerated from
the modules of ``pp_demo.figures``, so a new figure cannot escape; each is called as its notebook
calls it."""

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

import pp_demo.figures
from pp_demo.figures.palette import MAX_HEIGHT_IN, MAX_WIDTH_IN, PROJECTOR_PT

MIN_PANEL_IN = 2.5  # side by side, a panel still holds its ticks and marks at PROJECTOR_PT

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _draw_functions():
    found = set()
    for module_info in pkgutil.iter_modules(pp_demo.figures.__path__):
        module = importlib.import_module(f"pp_demo.figures.{module_info.name}")
        found |= {
            f"{module_info.name}.{name}"
            for name, fn in inspect.getmembers(module, inspect.isfunction)
            if name.startswith("draw_") and fn.__module__ == module.__name__
        }
    return found


def _padding_table(cases):
    from pp_demo.figures.pooling import draw_padding_table

    return draw_padding_table(cases=cases)


def _pad_eos_rows(side):
    # notebook 04: three texts through the tiny tokenizer, pad == eos, three rules
    from pp_demo.figures.pooling import draw_pad_eos_rows
    from pp_demo.workshop.tokenizer import tiny_tokenizer

    texts = ["the movie was great", "boring", "i loved it"]
    tok = tiny_tokenizer(side)
    batch = tok(texts, padding=True, return_tensors="pt")
    return draw_pad_eos_rows(
        batch["input_ids"],
        batch["attention_mask"],
        tok.pad_token_id,
        row_labels=[f"{side}: {text}" for text in texts],
        rules=("first_pad_mod", "rightmost_non_pad", "rightmost_attended"),
    )


def _row_diffs():
    # notebook 03: the bug and the fix on three families, the five rows both references agree on
    from pp_demo.figures.pooling import draw_row_diffs
    from pp_demo.verify.compare import reproduce

    rows = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded"]
    torch.set_num_threads(1)
    results = {
        (family, rule): reproduce(family, rule, rows=rows)
        for family in ("llama", "qwen2", "opt")
        for rule in ("count", "rightmost_non_pad")
    }
    return draw_row_diffs(results, rows)


def _class_grid():
    from pp_demo.figures.pooling import draw_class_grid
    from pp_demo.pooling.packed import class_grid

    return draw_class_grid(class_grid())


def _timeline(kind, n_stages, backward=True):
    from pp_demo.figures.schedules import draw_timeline

    return draw_timeline(kind, n_stages=n_stages, n_micro=4, backward=backward)


def _stage_split(split_points=None):
    from pp_demo.core import build_model, split_model
    from pp_demo.figures.pipeline import draw_stage_split

    return draw_stage_split(split_model(build_model("llama"), split_points))


def _stage_inputs():
    # notebook 02: what the last stage of the tiny Llama gets for three rows of length 6
    from pp_demo.figures.pipeline import draw_stage_inputs

    inputs = (
        ("stage 0", "hidden", (3, 6, 16)),
        ("schedule", "input_ids", (3, 6)),
        ("schedule", "attention_mask", (3, 6)),
    )
    return draw_stage_inputs(
        [(src, n, torch.zeros(s, dtype=torch.int64 if len(s) == 2 else torch.float32)) for src, n, s in inputs]
    )


def _memory_per_device():
    # notebook 01: a Llama-3-8B-sized model, whole and as four stages, against an 80 GiB device
    from pp_demo.figures.pipeline import draw_memory_per_device

    part = {"weights": 7.0, "gradients": 7.0, "Adam state": 14.0}
    columns = {"one device,\nwhole model": {k: 4 * v for k, v in part.items()}}
    columns |= {f"stage {i}\ndevice {i}": part for i in range(4)}
    return draw_memory_per_device(columns, 80)


def _review_grid():
    from pp_demo.figures.review import draw_review_grid

    return draw_review_grid(["left", "right", "left_pad_in_content", "right_pad_in_content"])


def _study_results():
    # notebook 05: the committed results files, keyed by their transformers version
    results = {}
    for name in ("training_study_4.51.3.json", "training_study_5.24.0.json"):
        data = json.loads((RESULTS / name).read_text())
        results[data["transformers"]] = data
    return results


def _study_distributions():
    from pp_demo.figures.study import draw_study_distributions

    return draw_study_distributions(_study_results())


def _one_seed_curves():
    # notebook 05 trains one seed for these; the stored curves of seed 0, and losses of the stored length
    from pp_demo.figures.study import draw_one_seed_curves

    data = next(iter(_study_results().values()))
    steps = data["settings"]["steps"]
    curves = {name: data["runs"][name]["seeds"][0]["curve"] for name in ("count", "fix")}
    losses = {
        name: [1.1 * 0.97**step + 0.01 * k for step in range(steps)]
        for k, name in enumerate(("model.forward", "count", "fix"))
    }
    return draw_one_seed_curves(losses, curves, target=0.9)


def _bench():
    # the committed benchmark run, as `python -m pp_demo bench` draws it beside its results
    from pp_demo.figures.bench import draw_bench

    return draw_bench(json.loads((RESULTS / "bench_cpu.json").read_text()))


FIGURES = {
    "bench.draw_bench": [("the committed run", _bench)],
    "pooling.draw_padding_table": [
        ("review table", lambda: _padding_table(["left", "right", "left_pad_in_content", "right_pad_in_content"])),
        ("two rows", lambda: _padding_table(["all_pad", "trailing_eos"])),
    ],
    "pooling.draw_pad_eos_rows": [
        ("right-padded", lambda: _pad_eos_rows("right")),
        ("left-padded", lambda: _pad_eos_rows("left")),
    ],
    "pooling.draw_row_diffs": [("three families", _row_diffs)],
    "pooling.draw_class_grid": [("every rule and case", _class_grid)],
    "schedules.draw_timeline": [
        ("gpipe forwards", lambda: _timeline("gpipe", 2, backward=False)),
        ("gpipe 2", lambda: _timeline("gpipe", 2)),
        ("1f1b 2", lambda: _timeline("1f1b", 2)),
        ("gpipe 3", lambda: _timeline("gpipe", 3)),
        ("1f1b 3", lambda: _timeline("1f1b", 3)),
    ],
    "pipeline.draw_stage_split": [("two stages", _stage_split), ("three stages", lambda: _stage_split((1, 2)))],
    "pipeline.draw_stage_inputs": [("two stages", _stage_inputs)],
    "pipeline.draw_memory_per_device": [("four stages", _memory_per_device)],
    "review.draw_review_grid": [("review table", _review_grid)],
    "study.draw_study_distributions": [("two versions", _study_distributions)],
    "study.draw_one_seed_curves": [("seed 0", _one_seed_curves)],
}
# saved as a file beside the results it draws (``python -m pp_demo bench``), never shown in a
# notebook: read as a page, scrolled, so not held to one screen's height
PAGE_FIGURES = {"bench.draw_bench"}
# boxes named in their titles, arrows by their labels: nothing for a key to explain
KEYLESS = {"pipeline.draw_stage_split", "pipeline.draw_stage_inputs"}
CASES = [pytest.param(name, draw, id=f"{name}: {what}") for name, cases in FIGURES.items() for what, draw in cases]


def _middle(box):
    return (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_every_draw_function_of_the_figures_package_is_checked_here():
    assert set(FIGURES) == _draw_functions()


@pytest.mark.parametrize("name, draw", CASES)
def test_every_figure_reads_on_a_projector(name, draw, monkeypatch):
    fig = draw()
    texts = []  # every text the renderer draws (not the tick labels of an axis turned off)
    draw_text = Text.draw

    def recording(text, renderer):
        if text.get_visible() and text.get_text().strip():
            texts.append(text)
        return draw_text(text, renderer)

    monkeypatch.setattr(Text, "draw", recording)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # lays the figure out and fills the tick labels the locators choose
    assert fig.get_size_inches()[0] <= MAX_WIDTH_IN and texts
    assert fig.get_size_inches()[1] <= MAX_HEIGHT_IN or name in PAGE_FIGURES
    small = {t.get_text(): t.get_fontsize() for t in texts if t.get_fontsize() < PROJECTOR_PT}
    assert not small
    # inside the figure: a notebook's tight bounding box would otherwise widen it past the rule
    box = fig.bbox
    outside = [t.get_text() for t in texts if not box.padded(2).contains(*t.get_window_extent(renderer).p0)]
    outside += [t.get_text() for t in texts if not box.padded(2).contains(*t.get_window_extent(renderer).p1)]
    assert not outside
    narrow = [ax.get_title(loc="left") for ax in fig.axes if ax.bbox.width / fig.dpi < MIN_PANEL_IN]
    assert not narrow  # panels side by side only as far as each stays legible
    # every mark inside its own panel: a verdict drawn past an axis's limits floats outside the plot
    strays = [
        t.get_text()
        for ax in fig.axes
        if ax.axison
        for t in ax.texts
        if t.get_gid() == "verdict" and not ax.bbox.padded(1).contains(*_middle(t.get_window_extent(renderer)))
    ]
    assert not strays
    assert not [t.get_text() for t in texts if re.search(r"(^|\s)[-–]\s+-1", t.get_text())]  # never "- -1"
    if name not in KEYLESS:
        assert fig.legends or any(ax.get_legend() for ax in fig.axes)
        titles = [ax.title.get_text() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""]
        assert not [t for t in titles if re.search("[✓✗]|hatched", t)]  # the key is the legend, not the title
