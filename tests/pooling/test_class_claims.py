"""Every plain claim (``pp_demo.pooling.failure.CLAIMS``: a sentence notebook 07's table of
classes reads aloud) is true on every row it covers, length 1 to 6, and covers at least one.

Row shapes as in ``pp_demo.pooling.failure``: ``r`` a real token, ``p`` padding carrying the pad
id, ``e`` a real token carrying the pad id. The rule runs through the package; the references are
written here from their definitions."""

import itertools

import pytest
import torch

from pp_demo.pooling.failure import CLAIMS, Claim, claims_about, wrong_when
from pp_demo.pooling.positions import pooled_positions
from pp_demo.pooling.survey import CLASSES, format_classes

PAD, REAL = 0, 7
SHAPES = ["".join(s) for n in range(1, 7) for s in itertools.product("rpe", repeat=n)]


def _reference(shape: str, reference: str) -> int | None:
    if reference == "true_last":
        real = [i for i, c in enumerate(shape) if c in "re"]
        return real[-1] if real else None
    non_pad = [i for i, c in enumerate(shape) if c == "r"]  # model.forward: rightmost non-pad id, else 0
    return non_pad[-1] if non_pad else 0


def _lands(rule: str, shape: str) -> int:
    ids = torch.tensor([[REAL if c == "r" else PAD for c in shape]])
    mask = torch.tensor([[0 if c == "p" else 1 for c in shape]])
    return int(pooled_positions(rule, input_ids=ids, pad_token_id=PAD, attention_mask=mask)[0]) % len(shape)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.rule}:{c.sentence[:30]}")
def test_a_claim_holds_on_every_row_it_covers(claim: Claim):
    covered = 0
    for shape in SHAPES:
        want = _reference(shape, claim.reference)
        if want is None or not claim.covers(shape):
            continue  # no real token: nothing to be right about
        covered += 1
        assert (_lands(claim.rule, shape) != want) == claim.wrong, (claim.sentence, shape)
    assert covered, f"{claim.sentence!r} covers no row"


def test_the_two_sentences_the_old_table_got_wrong_are_gone():
    # (a) is wrong on right padding with a pad id inside the text; (c) is not wrong "only when a row
    # ends in a real token equal to the pad id" once padding carries another id (exercise 07.2)
    assert _lands("count", "rerpp") != _reference("rerpp", "true_last")
    assert "wrong when the text holds a token that carries the pad id" in claims_about("count")
    table = format_classes()
    assert "only when padding is on the right" not in table
    assert "wrong only when a row ends" not in table


def test_every_class_with_a_token_rule_reads_its_claims_and_its_exact_condition():
    table = " ".join(format_classes(width=10_000).split())
    for c in CLASSES.values():
        if c.rule != "known_lengths":
            assert claims_about(c.rule)[1:] in table, c.letter  # after its first letter, set in capitals
            if c.rule != "rightmost_attended":  # never wrong: no footnote
                assert wrong_when(c.rule, "true_last") in table, c.letter
