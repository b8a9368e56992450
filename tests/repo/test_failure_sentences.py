"""What learners take home about when a rule fails is the sentence the exhaustive test checked.

Key points and objectives write a failure condition as ``{fails: RULE vs REFERENCE}``
(``pp_demo.pooling.failure``); the generated cells show the tested sentence. A bullet that
speaks of a rule going wrong without one is a paraphrase, and paraphrases are how the six wrong
key points of the instructor's read came about.
"""

import json
import pathlib
import re

import pytest

from pp_demo.pooling.failure import SENTENCES, plain_and_exact, render_failures

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9]*.ipynb"))
RULE_WORDS = re.compile(r"\b(count rule|counting|first-pad|first pad|first_pad\w*|\bcount\b)", re.I)
FAILURE_WORDS = re.compile(r"\b(miss\w*|wrong|fail\w*|break\w*|right only|go(es)? wrong)\b", re.I)
# the wrong sentences the instructor found, none of which may come back
RETIRED = [
    "right-padded rows match",
    "A pad id before the last real token sends",
    "whenever a pad id is followed by a real token",
    "it rescues rows with no pad id, not ONNX",
    "survives left padding (thanks to `-1`) but not a pad id inside the text",
    "or the row starts and ends with a pad id",  # false on the one-token row [0]: -1 lands on 0
    "on left-padded batches; its gpt2",  # 01's hand-written "who is affected", too narrow
]


def bullets(nb_path):
    ep = json.loads(nb_path.read_text())["metadata"]["episode"]
    return ep["keypoints"] + ep["objectives"]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_failure_condition_in_key_points_is_the_tested_sentence(nb_path):
    for bullet in bullets(nb_path):
        rendered = render_failures(bullet)  # raises on an unknown rule or reference
        states_a_condition = RULE_WORDS.search(bullet) and FAILURE_WORDS.search(bullet) and " when " in bullet
        if states_a_condition:
            assert any(sentence in rendered for sentence in SENTENCES.values()), bullet


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_retired_sentence_comes_back(nb_path):
    text = nb_path.read_text()
    for sentence in RETIRED:
        assert sentence not in text, (nb_path.name, sentence)


def test_placeholders_render_and_unknown_ones_are_refused():
    assert render_failures("x {fails: count vs forward} y") == f"x {plain_and_exact('count', 'forward')} y"
    with pytest.raises(KeyError):
        render_failures("{fails: count vs nowhere}")


# ---- "who is affected": rendered from the same conditions wherever it is said

README = NOTEBOOKS[0].parents[1] / "README.md"
WHO_BLOCK = re.compile(r"<!-- who-is-affected:[^\n]*-->\n(.*?)<!-- /who-is-affected -->", re.S)


def test_who_is_affected_states_the_tested_conditions_of_the_families_rules():
    from pp_demo.colossalai.affected import affected_families, who_is_affected
    from pp_demo.pooling.failure import PLAIN

    said = who_is_affected()
    assert affected_families() == {
        "count": ["llama", "qwen2", "opt"],
        "first_pad_mod": ["mistral", "gpt2", "bloom", "falcon", "gptj"],
    }
    for rule in ("count", "first_pad_mod"):
        assert PLAIN[rule, "forward"] in said and f"Exactly: {SENTENCES[rule, 'forward']}." in said
    # the narrow hand-written versions the instructor found
    assert "left-padded batches" not in said and "among the real tokens" not in said


def test_the_readme_shows_who_is_affected_as_rendered():
    from pp_demo.colossalai.affected import who_is_affected

    block = WHO_BLOCK.search(README.read_text(encoding="utf-8"))
    assert block and block.group(1) == who_is_affected()


def test_notebook_04_shows_who_is_affected_as_rendered():
    from pp_demo.colossalai.affected import who_is_affected

    cells = json.loads(next(p for p in NOTEBOOKS if p.name.startswith("04_")).read_text())["cells"]
    shown = [
        "".join(output["data"]["text/markdown"])
        for cell in cells
        for output in cell.get("outputs", [])
        if "text/markdown" in output.get("data", {})
    ]
    assert who_is_affected() in shown
    prose = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "on left-padded batches" not in prose and "a pad id among the real tokens" not in prose
