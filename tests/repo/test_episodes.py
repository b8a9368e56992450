"""Episode metadata in every notebook, the two cells shown from it, and the facilitator guide.

The notebooks are read as stored (no kernel). The guide and the README table are regenerated
and compared with the committed files, so a stale one fails with the command that fixes it.
"""

import copy
import inspect
import json
import pathlib
import re

import nbformat
import pytest

from pp_demo.pooling.failure import render_failures
from tools import episodes, facilitator, timing

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIX = "run `make guide` (python -m tools.guide) and commit the result"


@pytest.fixture
def stored(notebook_path):
    return notebook_path.stem, json.loads(notebook_path.read_text(encoding="utf-8"))


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def test_every_notebook_has_valid_episode_metadata(stored):
    name, nb = stored
    assert episodes.problems(nbformat.reads(json.dumps(nb), as_version=4), name) == []
    ep = nb["metadata"]["episode"]
    assert ep["track"] in ("core", "optional")
    assert 1 <= len(ep["questions"]) <= 3 and ep["objectives"] and ep["keypoints"]


def test_every_section_heading_is_classified_and_the_minutes_add_up(stored):
    name, nb = stored
    ep = nb["metadata"]["episode"]
    authored = [c for c in nb["cells"] if c["cell_type"] == "markdown" and not c.get("id", "").startswith("episode-")]
    headings = {m for c in authored for m in re.findall(r"^## (.+?)\s*$", _text(c["source"]), flags=re.M)}
    headings.discard("What you will learn")
    assert set(ep["sections"]) == headings, name
    assert all(info["track"] in ("core", "optional") for info in ep["sections"].values())
    teaching = sum(info["minutes"] for heading, info in ep["sections"].items() if heading != "Exercises")
    assert (ep["teaching_minutes"], ep["exercise_minutes"]) == (teaching, ep["sections"]["Exercises"]["minutes"])


def test_first_and_last_cells_show_the_metadata(stored):
    name, nb = stored
    ep, cells = nb["metadata"]["episode"], nb["cells"]
    title = next(i for i, c in enumerate(cells) if _text(c["source"]).startswith("# "))
    header, last = _text(cells[title + 1]["source"]), _text(cells[-1]["source"])
    assert cells[title + 1]["id"] == "episode-header" and cells[-1]["id"] == "episode-keypoints", name
    assert f"teaching {ep['teaching_minutes']} min" in header and f"exercises {ep['exercise_minutes']} min" in header
    # failure conditions are written {fails: RULE vs REFERENCE} and shown as the tested sentence
    assert all(f"- {render_failures(item)}" in header for item in ep["questions"] + ep["objectives"])
    assert last.startswith("## Key points") and all(f"- {render_failures(p)}" in last for p in ep["keypoints"])
    assert episodes.generated_cells_problems(nbformat.reads(json.dumps(nb), as_version=4), name) == []


def test_the_guide_and_the_readme_table_are_fresh(notebooks):
    committed = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    assert facilitator.guide(ROOT) == committed, FIX
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = [p.name for p in notebooks]
    assert facilitator.readme_with_minutes(readme, facilitator.load(ROOT), names, ROOT) == readme, FIX
    for path in notebooks:  # and the README's table says what the metadata says
        ep = json.loads(path.read_text(encoding="utf-8"))["metadata"]["episode"]
        assert (
            f"| {ep['teaching_minutes']} min | {ep['exercise_minutes']} min |"
            in readme.split(path.name, 1)[1].split("\n")[0]
        )


def test_the_timing_constants_cost_a_notebook_at_teaching_speed():
    # the constants are fitted (tests/repo/test_clock.py): here, how the clock adds them up. One
    # section of 112 words, a code cell that prints and one that draws (plt.show), a prediction:
    # 2 + 1.1 + 2.2 + 1.8 = 7.1; 28 words, a silent cell (nothing printed: free): 0.5, at least 1
    printed = nbformat.v4.new_code_cell("1")
    printed.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1)]
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("## One\n\n" + "word " * 112),
            printed,
            nbformat.v4.new_code_cell("plt.show()"),
            nbformat.v4.new_markdown_cell("**Predict** this"),
            nbformat.v4.new_markdown_cell("## Two\n\n" + "word " * 26),
            nbformat.v4.new_code_cell("import os"),
            nbformat.v4.new_markdown_cell("## Exercises\n\nsome words"),
        ]
    )
    kinds = {"99.1": "value", "99.2": "function"}
    assert timing.WORDS_PER_MINUTE == 56 and timing.CODE_CELL_MINUTES == 1.1 and timing.SHOW_CELL_MINUTES == 2.2
    assert timing.notebook_minutes(nb, kinds) == {"One": 7, "Two": 1, "Exercises": 16}
    assert timing.exercise_costs(kinds) == {"99.1": 6, "99.2": 10}
    assert timing.notebook_minutes_extra() == 4


def test_each_exercise_is_listed_with_its_minutes(stored):
    name, nb = stored
    listed = nb["metadata"]["episode"]["sections"]["Exercises"]["exercises"]
    kinds = episodes.exercise_kinds(name)
    assert {key: info["minutes"] for key, info in listed.items()} == timing.exercise_costs(kinds)
    assert sum(info["minutes"] for info in listed.values()) == nb["metadata"]["episode"]["exercise_minutes"]


def test_every_exercise_has_an_answer_a_why_and_wrong_answers_the_checker_rejects():
    from pp_demo.exercises import EXERCISES, status

    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    for key, exercise in EXERCISES.items():
        solution = exercise.solution
        name = f"{getattr(solution, '__module__', '')}.{getattr(solution, '__qualname__', '')}"
        if name in exercise.refuse:  # a reference the reader could pass as it is: refused, right by its judge
            assert exercise.judge(solution) is None
            assert status(key, solution) == f"not yet: your answer calls {name}: write it yourself from the definition"
        else:
            assert status(key, solution) == "correct"
        assert exercise.why.strip() and exercise.wrong_answers, f"{key} needs a why and common wrong answers"
        for answer, _, reveals in exercise.wrong_answers:
            said = status(key, answer)
            assert said.startswith("not yet:") and reveals, (key, answer)
            assert not re.match(r"not yet: (give|answer) ", said), f"{key}: {answer!r} is rejected for its form only"
        block = guide.split(f"**{key}.**", 1)[1].split("\n**", 1)[0]
        assert f"- Why: {exercise.why}\n" in block  # the record's why, word for word
        assert "- Answer:" in block and block.count("- Wrong:") == len(exercise.wrong_answers)


def test_the_guide_reads_each_exercise_from_its_record_not_from_comments():
    # the record is the one home: a why or a wrong answer lives nowhere else in the package
    source = inspect.getsource(facilitator)
    assert "getsource(solutions)" not in source and "wrong_answers import" not in source
    assert not (ROOT / "pp_demo" / "exercises" / "wrong_answers.py").exists()


def test_every_troubleshooting_row_is_in_the_guide():
    table = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    symptoms = [
        line.split(" | ")[0][2:] for line in table.splitlines() if line.startswith("| ") and "you see" not in line
    ]
    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    assert len(symptoms) >= 10 and all(f"**{s}**" in guide for s in symptoms)


def _notebook(tmp_path, *headings):
    cells = [nbformat.v4.new_markdown_cell("# 99 · T\n\n## What you will learn\n\n- x")]
    for heading in headings:
        cells += [nbformat.v4.new_markdown_cell(f"## {heading}\n\nwords here"), nbformat.v4.new_code_cell("1 + 1")]
    cells[-1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    path = tmp_path / "99_t.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


SEED = {
    "track": "optional",
    "questions": ["q?"],
    "objectives": ["o"],
    "keypoints": ["k"],
    "sections": {"A": "core", "Exercises": "core"},
}


def test_apply_from_seed_then_again_is_idempotent_and_finds_its_cells_where_they_moved(tmp_path):
    path = _notebook(tmp_path, "A", "Exercises")
    assert episodes.apply(path, SEED) is True
    nb = nbformat.read(path, as_version=4)
    assert [c.get("id") for c in nb.cells][1 :: len(nb.cells) - 2] == ["episode-header", "episode-keypoints"]
    assert nb.metadata.episode["sections"] == {
        # computed from the content (tools/timing.py): a few words and one code cell each, A's
        # silent (run, nothing to read) and the last one printing (1.2): at least 1 either way;
        # notebook 99 has no registered exercise, so its exercises section is costed by its content
        "A": {"track": "core", "minutes": 1},
        "Exercises": {"track": "core", "minutes": 1, "exercises": {}},
    }
    code_before = [copy.deepcopy(c) for c in nb.cells if c.cell_type == "code"]
    nb.cells.append(nb.cells.pop(1))  # the header moved to the end by hand
    nb.metadata.episode["keypoints"] = ["changed"]
    nbformat.write(nb, path)
    assert episodes.apply(path) is True
    again = nbformat.read(path, as_version=4)
    assert again.cells[1].id == "episode-header" and again.cells[-1].source.endswith("- changed")
    assert [c for c in again.cells if c.cell_type == "code"] == code_before
    assert episodes.apply(path) is False


def test_a_heading_missing_from_the_seed_is_named(tmp_path):
    path = _notebook(tmp_path, "A", "New one", "Exercises")
    with pytest.raises(episodes.EpisodeError, match="New one"):
        episodes.apply(path, SEED)
    assert episodes.apply(path, {**SEED, "default_track": "optional"}) is True


def test_bad_metadata_gives_one_line_per_problem(tmp_path):
    path = _notebook(tmp_path, "A", "Exercises")
    episodes.apply(path, SEED)
    nb = nbformat.read(path, as_version=4)
    nb.metadata.episode["questions"] = ["1", "2", "3", "4"]
    nb.metadata.episode["teaching_minutes"] = 9
    found = episodes.problems(nb, "99_t")
    assert len(found) == 1 and "questions" in found[0]  # minutes are checked once the shape is right
    nb.metadata.episode["questions"] = ["1"]
    assert episodes.problems(nb, "99_t") == ["99_t: teaching_minutes is 9, its sections add up to 1"]
    del nb.metadata.episode["sections"]["A"]
    assert "not classified: ['A']" in episodes.problems(nb, "99_t")[0]


def test_every_notebook_has_instructor_notes_and_the_guide_shows_the_room(notebooks):
    from tools import instructor_notes

    assert sorted(instructor_notes.EPISODES) == sorted(p.name[:2] for p in notebooks)
    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    for heading in ("## The room", "## Glossary", "**The instructor's notes for this plan**"):
        assert heading in guide
    for title in ("Learner profile", "Prerequisites", "A machine that breaks", "Feedback"):
        assert f"**{title}.**" in guide
    assert timing.CONSTANTS_TEXT in guide  # the timing model is printed where the minutes are


# The six words the guide once defined on its own: the glossary page holds them now.
WORKBOOK_WORDS = {"left padding", "pad == eos", "attention mask", "true last real token", "model.forward's position",
                  "review table"}  # fmt: skip


def _guide_glossary_terms() -> list[str]:
    """The first column of the table under the guide's ``## Glossary``, as committed."""
    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    section = guide.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == "| term | meaning |"
    return [row.split(" | ")[0].removeprefix("| ") for row in rows[1:]]


def test_the_guides_glossary_is_the_glossary_page_term_for_term():
    """One source: the attendees' page. Its terms are read here from its ``###`` headings, a
    heading's markup (an anchor for JupyterLab) left out."""
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    headings = [re.sub(r"<[^>]+>", "", line[4:]).strip() for line in page.splitlines() if line.startswith("### ")]
    terms = _guide_glossary_terms()
    assert len(terms) == len(set(terms)) and sorted(terms) == sorted(headings)
    assert set(terms) >= WORKBOOK_WORDS | {"1F1B", "pad id", "stage"}


def _readable_text(path: pathlib.Path) -> str:
    """What a reader of the notebook reads: its cells' sources and text outputs (a figure's base64
    is left out, where a short term can turn up by chance)."""
    parts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        parts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            parts += ["".join(v) for k, v in output.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


def test_every_term_of_the_guides_glossary_is_used_in_the_notebooks(notebooks):
    text = " ".join(_readable_text(p).lower() for p in notebooks)
    terms = _guide_glossary_terms()
    assert len(terms) >= 25 and [t for t in terms if t.lower() not in text] == []
