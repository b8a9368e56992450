"""The notebooks' own prose about when a rule is right or wrong, read word for word.

Key points render their conditions from ``pp_demo.pooling.failure``
(``tests/repo/test_failure_sentences.py``); the prose between the cells is written by hand. Each
sentence below is quoted as it stands in its notebook's markdown, given its literal reading, and
the reading is checked against where the rule really lands on every row of length 1 to 6 that
the sentence speaks of. Each sentence names the position it judges by: the true last real token
(``"true_last"``) or the position ``model.forward`` pools (``"forward"``).

Shapes: ``r`` a non-pad token, ``p`` padding (the pad id, mask 0), ``e`` a real eos carrying the
pad id (mask 1). Rows with no ``r`` are the footnote's (``pp_demo.pooling.failure``) and are left
out unless a reading says otherwise.
"""

import json
import pathlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from helpers import landings

from pp_demo.core import CASES, PAD, RULES
from pp_demo.pooling.positions import pooled_positions
from pp_demo.training.loop import make_batches
from pp_demo.training.study import with_eos

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"


@dataclass(frozen=True)
class Sentence:
    notebook: str  # the notebook's number
    quote: str  # word for word, whitespace folded
    rules: tuple[str, ...]
    reference: str  # "true_last" or "forward"
    about: Callable[[str], bool]  # the row shapes the sentence speaks of
    holds: Callable[[str, int, int], bool]  # its reading on one row: (shape, where the rule lands, reference)


def _shape(case):
    """A padding case as a row shape: ``r``, ``p`` or ``e`` per position."""
    return "".join(
        "p" if not m else "e" if i == PAD else "r" for i, m in zip(case.input_ids, case.attention_mask, strict=True)
    )


def _starts_with_text(s):
    return re.fullmatch(r"r+p*", s) is not None


FIRST_PAD = ("first_pad", "first_pad_mod")
PADDED_ROW_RULES = tuple(name for name in RULES if name != "known_lengths")  # it reads packed lengths

SENTENCES = [
    Sentence(
        "12",
        "That is a position only when all real tokens come first *and* none of them shares the pad id.",
        ("count",),
        "true_last",
        lambda s: "r" in s,
        lambda s, at, want: (at == want) == _starts_with_text(s),
    ),
    Sentence(
        "12",
        "When a real token does carry the pad id (common when the pad id is reused as the end-of-sequence "
        "id), it is not counted, and the rule lands one more place too early.",
        ("count",),
        "true_last",
        lambda s: "r" in s and re.fullmatch(r"[re]+p*", s) is not None,  # real tokens first: only the eos differ
        lambda s, at, want: at == want - s.count("e"),
    ),
    Sentence(
        "03",
        "A test that only feeds unpadded rows cannot fail on this bug",
        ("count",),
        "forward",
        lambda s: set(s) == {"r"},
        lambda s, at, want: at == want,
    ),
    Sentence(
        "03",
        "rows whose non-pad tokens all come first are exactly the ones the count rule gets right.",
        ("count",),
        "forward",
        lambda s: "r" in s,
        lambda s, at, want: (at == want) == ("p" not in s[: s.rfind("r")] and "e" not in s[: s.rfind("r")]),
    ),
    Sentence(
        "05",
        "A full row has no padding; it counts with the right-padded rows, since every rule pools it correctly.",
        PADDED_ROW_RULES,
        "true_last",
        lambda s: set(s) == {"r"},
        lambda s, at, want: at == want,
    ),
    Sentence(
        "13",
        "On plain left or right padding that is right;",
        ("first_pad",),
        "true_last",
        lambda s: re.fullmatch(r"p*r+|r+p*", s) is not None,
        lambda s, at, want: at == want,
    ),
    Sentence(
        "13",
        "with pad == eos (notebook 04) it stops at the first eos inside the text.",
        ("first_pad",),
        "true_last",
        lambda s: re.match(r"r+e", s) is not None,
        lambda s, at, want: at == s.index("e") - 1,
    ),
    Sentence(
        "06",
        "the five first-pad families miss the pad == eos row `[5,0,7,8,0,0]`",
        FIRST_PAD,
        "forward",
        lambda s: s == _shape(CASES["right_pad_in_content"]),
        lambda s, at, want: at != want,
    ),
    Sentence(
        "09",
        "A row padded on both sides goes wrong with no pad id inside,",
        FIRST_PAD,
        "forward",
        lambda s: re.fullmatch(r"p+r+p+", s) is not None,
        lambda s, at, want: at != want,
    ),
    Sentence(
        "09",
        "and a pad id inside a left-padded row that ends in a real token does no harm.",
        FIRST_PAD,
        "forward",
        lambda s: re.fullmatch(r"p+r.*[pe].*r", s) is not None,
        lambda s, at, want: at == want,
    ),
]


def _markdown(number):
    (path,) = NOTEBOOKS.glob(f"{number}_*.ipynb")
    cells = json.loads(path.read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("sentence", SENTENCES, ids=lambda s: f"{s.notebook}:{s.quote[:40]}")
def test_the_sentence_stands_in_its_notebook(sentence):
    assert sentence.quote in _markdown(sentence.notebook)


@pytest.mark.parametrize("sentence", SENTENCES, ids=lambda s: f"{s.notebook}:{s.quote[:40]}")
def test_the_sentence_is_true_on_every_row_it_speaks_of(sentence):
    for rule in sentence.rules:
        judged = 0
        for shape, (at, true_last, forward) in landings(rule).items():
            want = true_last if sentence.reference == "true_last" else forward
            if sentence.about(shape) and want is not None:
                judged += 1
                assert sentence.holds(shape, at, want), (rule, shape, at, want)
        assert judged > 0, "the sentence speaks of no row of length 1 to 6"


def test_the_row_06_names_is_the_case_its_shape_is_read_from():
    assert CASES["right_pad_in_content"].input_ids == (5, 0, 7, 8, 0, 0)
    assert _shape(CASES["right_pad_in_content"]) == "rerrpp"


def test_on_the_pad_equals_eos_task_first_pad_pools_an_earlier_real_token_never_a_pad():
    # 13: "On the pad == eos task it pools an earlier real token on every right-padded or full row
    # that holds an eos, and never a pad" -- read on the task's own rows, not on every shape
    sentence = "it pools an earlier real token on every right-padded or full row that holds an eos, and never a pad"
    assert sentence in _markdown("13")
    rows_with_eos = 0
    for seed in range(3):
        for batch in make_batches(8, seed=seed):
            task = with_eos(batch, seed)
            ids, mask = task.input_ids, task.attention_mask
            at = pooled_positions("first_pad", input_ids=ids, pad_token_id=PAD, attention_mask=mask) % ids.shape[1]
            for row in range(ids.shape[0]):
                assert mask[row, at[row]] == 1, "pooled a pad"
                true_last = int(mask[row].nonzero().max())
                has_eos = bool(((ids[row] == PAD) & (mask[row] == 1)).any())
                if has_eos and mask[row, 0] == 1:  # right-padded or full
                    rows_with_eos += 1
                    assert at[row] < true_last
    assert rows_with_eos > 0
