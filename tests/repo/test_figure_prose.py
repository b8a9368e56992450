"""What the notebooks' prose says about their figures and rules is what the figures draw and the
rules do: a label, a legend, a marker's shape and a mark are read from the same values as the
text that names them (a reader compares the two side by side)."""

import json
import pathlib
import re

import pytest

from pp_demo.core import CORE_RULES, build_model, split_model
from pp_demo.figures.pipeline import stage_contents
from pp_demo.figures.pooling import NO_ANSWER_LABEL, draw_padding_table
from pp_demo.figures.study import SIDE_SHAPES
from pp_demo.pooling.padding_table import NO_ANSWER, format_padding_table
from pp_demo.training.study import StudySettings

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SHAPE_WORDS = re.compile(r"\b(circles?|squares?|triangles?|diamonds?|crosses|stars?)\b")


def _notebook(number):
    (path,) = NOTEBOOKS.glob(f"{number}_*.ipynb")
    return json.loads(path.read_text(encoding="utf-8"))


def _cell(notebook, cell_id):
    (cell,) = [c for c in notebook["cells"] if c.get("id") == cell_id]
    return cell


def _text(cell):
    return " ".join("".join(cell["source"]).split())  # whitespace folded


def _outputs(cell):
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))


def test_the_stage_split_figure_names_the_rule_the_pipeline_below_it_runs():
    nb = _notebook("01")
    split = "".join(_cell(nb, "c01-split")["source"])
    (rule,) = re.findall(r'^PIPELINE_RULE = "(\w+)"', split, flags=re.M)
    assert "rule=PIPELINE_RULE" in split  # the figure's stages pool with it ...
    assert "rule=PIPELINE_RULE" in "".join(_cell(nb, "c01-symptom-code")["source"])  # ... and so does the run
    assert f"`{rule}`" in _text(_cell(nb, "c01-symptom"))  # the prose names the same rule
    assert f"pooling: {rule}" in stage_contents(split_model(build_model("llama"), rule=rule))[-1]


def test_every_rule_of_the_review_table_is_defined_before_the_table():
    nb = _notebook("01")
    cells = nb["cells"]
    table = next(i for i, c in enumerate(cells) if "format_padding_table(" in "".join(c["source"]) and c["outputs"])
    above = " ".join(_text(c) for c in cells[:table] if c["cell_type"] == "markdown")
    undefined = [name for name in CORE_RULES if f"- `{name}`:" not in above]
    assert undefined == []


def test_the_count_rule_is_said_to_count_non_pad_ids_not_real_tokens():
    # a real token may carry the pad id (notebook 03 prints a row of 4 real tokens and 3 non-pad ids)
    wrong = re.compile(r"counting the real tokens|how many real tokens|count of real tokens", re.I)
    found = []
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        texts = [_text(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
        texts += [json.dumps(nb["metadata"].get("episode", {}))]
        found += [path.name for t in texts if wrong.search(t)]
    for path in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "tools" / "episode_seed.json"]:
        found += [path.name] * bool(wrong.search(path.read_text(encoding="utf-8")))
    assert found == []
    assert "non-pad ids" in _text(_cell(_notebook("01"), "c12"))


def test_the_no_answer_mark_is_one_spelling_in_the_tables_the_figure_and_the_text():
    assert NO_ANSWER_LABEL.split(" ", 1)[1] in format_padding_table(cases=["all_pad"])
    assert NO_ANSWER_LABEL.startswith(NO_ANSWER)
    fig = draw_padding_table(cases=["all_pad"])
    marks = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "verdict"]
    assert marks and all(m.startswith(f"{NO_ANSWER} (") for m in marks)
    assert NO_ANSWER_LABEL in [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert f"`{NO_ANSWER}`" in _text(_cell(_notebook("04"), "c28"))
    assert "n/a" not in _text(_cell(_notebook("04"), "c28"))


@pytest.mark.parametrize("number", ["13"])
def test_the_marker_shapes_named_in_the_prose_are_the_figures(number):
    text = " ".join(_text(c) for c in _notebook(number)["cells"] if c["cell_type"] == "markdown")
    assert f"{SIDE_SHAPES['left']}: left-padded" in text
    assert f"{SIDE_SHAPES['right']}: right-padded" in text
    assert set(SHAPE_WORDS.findall(text)) <= set(SIDE_SHAPES.values())


def test_the_study_split_is_described_as_the_layers_each_stage_holds():
    split_at = StudySettings().split_at
    source = "".join(_cell(_notebook("05"), "96b437c1")["source"])
    assert f"layers 0-{split_at - 1} | {split_at}-" in source
    assert not re.search(r"split after layer", source)


def test_the_fix_section_of_03_claims_nothing_a_machine_may_contradict():
    nb = _notebook("03")
    text = " ".join(_text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert not re.search(r"not at 0|near 1e-8|a few 1e-8", text)  # exactly 0 on some CPUs
    assert "often exactly 0" in text


def test_the_parameter_count_is_explained_next_to_the_name():
    nb = _notebook("01")
    out = _outputs(_cell(nb, "c01-memory-code"))
    classifier = float(re.search(r"^parameters: ([\d.]+) billion", out, re.M).group(1))
    language_model = float(re.search(r"LM head of \d+ x \d+: ([\d.]+) billion", out).group(1))
    assert classifier < language_model == 8.0  # the name's 8B is the language model's
    assert "LM head" in _text(_cell(nb, "c01-memory"))


def test_04_the_first_pad_rules_arithmetic_states_no_number_before_the_cell_that_prints_it():
    """The prose says what `-1` and the modulo do; the row's length and where it lands are read
    from the output below it, not stated before anything has printed them."""
    cells = _notebook("04")["cells"]
    (at,) = [i for i, c in enumerate(cells) if _text(c).startswith("## Why `-1` rescues the first-pad rule")]
    printed_above = " ".join(_outputs(c) for c in cells[:at])
    # what the rule itself is: the first pad at position 0, one step back; any other number is read
    own = {"0", "-1"}
    numbers = re.findall(r"(?<![\w.-])-?\d+(?:\.\d+)?(?!\w|\.\d)", _text(cells[at]))
    assert numbers  # the check reads the section (its 0 and -1)
    unread = [
        n for n in numbers if n not in own and not re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w])", printed_above)
    ]
    assert unread == []
