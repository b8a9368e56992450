"""Every failure sentence, read word for word, is true on every row of length 1 to 6.

``tests/pooling/test_failure.py`` checks each condition's *predicate* against its rule. A
sentence is prose, so here each one is written again as its literal reading in plain Python
(no regular expression of the module) and that reading is checked against where the rule
really lands: the exact sentence on every judged row, the plain one on every row with a
non-pad token (rows of pad ids only are what the exact sentence, the footnote, adds).

Shapes: ``r`` a non-pad token, ``p`` padding (the pad id, mask 0), ``e`` a real eos carrying
the pad id (mask 1).
"""

import pytest
from helpers import landings

from pp_demo.pooling.failure import FAILURES, PLAIN, SENTENCES, plain_and_exact, render_failures


def _pad_before_last_non_pad(s):
    return "r" in s and any(c in "pe" for c in s[: s.rfind("r")])


def _non_pad_then_padding(s):
    text = s.rstrip("p")
    return bool(text) and set(text) == {"r"}


def _text_first_with_pad_inside(s):
    return s[0] == "r" and _pad_before_last_non_pad(s)


def _pad_id_at_both_ends(s):  # "a row of two or more tokens starts and ends with a pad id"
    return len(s) > 1 and s[0] in "pe" and s[-1] in "pe"


def _text_goes_on_at_first_pad(s):
    first = next((i for i, c in enumerate(s) if c in "pe"), None)
    return s[0] == "r" and first is not None and any(c in "re" for c in s[first:])


def _eos_ends_text(s):
    real = [c for c in s if c in "re"]
    return bool(real) and real[-1] == "e"


def _eos_after(s):
    after = s[s.rfind("r") + 1 :] if "r" in s else s[1:]
    return "e" in after


NEVER = lambda s: False  # noqa: E731

# (rule, reference): (plain sentence, its reading, exact sentence, its reading)
READINGS = {
    ("count", "forward"): (
        "a pad id comes before the last non-pad token",
        _pad_before_last_non_pad,
        "some pad id comes before the last non-pad token, or the row has no non-pad token and is longer than one",
        lambda s: _pad_before_last_non_pad(s) or ("r" not in s and len(s) > 1),
    ),
    ("count", "true_last"): (
        "the row is anything but non-pad tokens, then padding if any",
        lambda s: not _non_pad_then_padding(s),
        "the row is anything but real non-pad tokens followed by padding (with no non-pad token: unless it "
        "ends in a real eos)",
        lambda s: not _non_pad_then_padding(s) and not ("r" not in s and s[-1] == "e"),
    ),
    **{
        (rule, "forward"): (
            "a pad id sits inside text that starts the row, or a row of two or more tokens starts and ends "
            "with a pad id",
            lambda s: _text_first_with_pad_inside(s) or _pad_id_at_both_ends(s),
            "the first pad id follows a real token and a non-pad token comes after it, or the row is longer "
            "than one token and starts and ends with a pad id",
            lambda s: _text_first_with_pad_inside(s) or _pad_id_at_both_ends(s),
        )
        for rule in ("first_pad", "first_pad_mod")
    },
    **{
        (rule, "true_last"): (
            "the text starts the row and goes on at or after its first pad id, or the row starts with a pad "
            "id and ends with padding",
            lambda s: _text_goes_on_at_first_pad(s) or (s[0] in "pe" and s[-1] == "p"),
            "the first pad id follows a real token and a real token (an eos equal to pad included) comes at or "
            "after it, or the row starts with a pad id and ends with padding",
            lambda s: _text_goes_on_at_first_pad(s) or (s[0] in "pe" and s[-1] == "p"),
        )
        for rule in ("first_pad", "first_pad_mod")
    },
    ("rightmost_non_pad", "forward"): (
        "never: it is model.forward's rule",
        NEVER,
        "never: it is model.forward's rule",
        NEVER,
    ),
    **{
        (rule, reference): (
            "a real eos that carries the pad id ends the text",
            _eos_ends_text,
            "a real eos equal to pad comes after the last non-pad token (with no non-pad token: after position 0)",
            _eos_after,
        )
        for rule, reference in [
            ("rightmost_non_pad", "true_last"),
            ("rightmost_attended", "forward"),
            ("attended_cumsum", "forward"),
        ]
    },
    ("attended_flip", "forward"): (
        "a real eos that carries the pad id ends the text",
        _eos_ends_text,
        "a real eos equal to pad comes after the last non-pad token (with no non-pad token: after position 0), "
        "or the row is padding only and longer than one",
        lambda s: _eos_after(s) or (set(s) == {"p"} and len(s) > 1),
    ),
    **{
        (rule, "true_last"): (
            "never: it reads the mask that defines the reference",
            NEVER,
            "never: it reads the mask that defines the reference",
            NEVER,
        )
        for rule in ("rightmost_attended", "attended_flip", "attended_cumsum")
    },
}


def _misses(rule, reference):
    """Per shape, whether ``rule`` lands elsewhere than ``reference`` (None: nothing to judge)."""
    out = {}
    for shape, (at, true_last, forward) in landings(rule).items():
        want = true_last if reference == "true_last" else forward
        out[shape] = None if want is None else at != want
    return out


def test_every_condition_has_a_reading():
    assert set(READINGS) == {(c.rule, c.reference) for c in FAILURES}


@pytest.mark.parametrize("key", list(READINGS), ids=lambda k: f"{k[0]}-vs-{k[1]}")
def test_each_sentence_is_the_one_read_here(key):
    plain, _, exact, _ = READINGS[key]
    assert (PLAIN[key], SENTENCES[key]) == (plain, exact)


@pytest.mark.parametrize("key", list(READINGS), ids=lambda k: f"{k[0]}-vs-{k[1]}")
def test_the_exact_sentence_is_true_on_every_row(key):
    _, _, _, exact_reading = READINGS[key]
    for shape, missed in _misses(*key).items():
        if missed is not None:
            assert exact_reading(shape) == missed, (key, shape)


# the plain sentences that hold on rows of pad ids only too (the others leave those to the footnote)
PLAIN_ON_EVERY_ROW = {(rule, "forward") for rule in ("first_pad", "first_pad_mod", "rightmost_non_pad")}


@pytest.mark.parametrize("key", list(READINGS), ids=lambda k: f"{k[0]}-vs-{k[1]}")
def test_the_plain_sentence_is_true_on_every_row_with_a_non_pad_token(key):
    _, plain_reading, _, _ = READINGS[key]
    for shape, missed in _misses(*key).items():
        if missed is not None and ("r" in shape or key in PLAIN_ON_EVERY_ROW):
            assert plain_reading(shape) == missed, (key, shape)


def test_the_single_all_pad_row_is_pooled_right_by_first_pad():
    # "[0]": -1 lands on position 0, where model.forward pools; the old sentence said wrong
    assert _misses("first_pad", "forward")["p"] is False
    assert "longer than one token" in SENTENCES["first_pad", "forward"]


def test_a_key_point_shows_the_plain_sentence_then_the_exact_one():
    assert render_failures("{fails: count vs forward}") == (
        f"{PLAIN['count', 'forward']} (exactly: {SENTENCES['count', 'forward']})"
    )
    assert plain_and_exact("rightmost_non_pad", "forward") == "never: it is model.forward's rule"
