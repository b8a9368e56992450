"""Every failure condition, checked against its rule on every row of length 1 to 8.

A row's positions each hold a real token (``r``), padding (``p``: the pad id, mask 0) or a real
eos equal to pad (``e``: the pad id, mask 1): 9,840 rows. The rules run through the package
(``pooled_positions``); the two references are written here from their definitions.
"""

import itertools

import pytest
import torch

from pp_demo.core import RULES
from pp_demo.pooling.failure import FAILURES, SENTENCES, is_wrong, wrong_when
from pp_demo.pooling.positions import pooled_positions

PAD, REAL = 0, 7
SHAPES = {length: ["".join(s) for s in itertools.product("rpe", repeat=length)] for length in range(1, 9)}


def true_last(shape):
    """The last position the mask marks real; None on a row of padding only."""
    real = [i for i, c in enumerate(shape) if c in "re"]
    return real[-1] if real else None


def forward_pools(shape):
    """model.forward's position in transformers 4.51.3: the rightmost non-pad id, else 0."""
    non_pad = [i for i, c in enumerate(shape) if c == "r"]
    return non_pad[-1] if non_pad else 0


def landed_positions(rule, shapes):
    ids = torch.tensor([[REAL if c == "r" else PAD for c in s] for s in shapes])
    mask = torch.tensor([[0 if c == "p" else 1 for c in s] for s in shapes])
    raw = pooled_positions(rule, input_ids=ids, pad_token_id=PAD, attention_mask=mask)
    return (raw % ids.shape[1]).tolist()  # where tensor indexing reads a raw position


CONDITIONS = [(c.rule, c.reference) for c in FAILURES]


def test_every_token_rule_has_a_condition_against_both_references():
    token_rules = [name for name in RULES if name != "known_lengths"]  # packed batches have no padding
    assert sorted(CONDITIONS) == sorted(itertools.product(token_rules, ["forward", "true_last"]))


@pytest.mark.parametrize(("rule", "reference"), CONDITIONS)
def test_the_predicate_is_exactly_where_the_rule_misses(rule, reference):
    for shapes in SHAPES.values():
        for shape, landed in zip(shapes, landed_positions(rule, shapes), strict=True):
            expected = forward_pools(shape) if reference == "forward" else true_last(shape)
            if expected is None:
                continue  # no real token: nothing to be right about
            assert is_wrong(rule, reference, shape) == (landed != expected), (rule, reference, shape, landed)


def test_the_review_table_rows_read_as_the_review_says():
    # the review table (pad 0, length 6), judged against model.forward
    assert [is_wrong("count", "forward", s) for s in ["pprrrr", "rrrrpp", "pprerr", "rerrpp"]] == [
        True,
        False,
        True,
        True,
    ]
    # [0,0,5,0,7,8] is a left-padded row with pad == eos inside: first_pad_mod pools 5, as model.forward
    assert [is_wrong("first_pad_mod", "forward", s) for s in ["pprrrr", "rrrrpp", "pprerr", "rerrpp"]] == [
        False,
        False,
        False,
        True,
    ]


def test_both_first_pad_variants_read_the_same_token_everywhere():
    for shapes in SHAPES.values():
        assert landed_positions("first_pad", shapes) == landed_positions("first_pad_mod", shapes)


def test_sentences_render_one_line_each():
    assert wrong_when("count", "forward").startswith("count misses model.forward's position when some pad id")
    assert all("\n" not in sentence for sentence in SENTENCES.values())
    with pytest.raises(KeyError):
        wrong_when("known_lengths", "forward")
    with pytest.raises(ValueError):
        is_wrong("count", "forward", "rxp")
