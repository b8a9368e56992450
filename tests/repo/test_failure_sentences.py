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
