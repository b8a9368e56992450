"""Every pooling rule on every padding case, expected positions written out by hand.

The first four rows are the review table of the pull request (pad 0, length 6); the
other three are worked out from each rule's definition. Positions are raw: the
unwrapped first-pad rule (ColossalAI's mistral) returns -1, which indexing reads as
the last position. The packed-batch rule (``known_lengths``) reads no padded row at
all; it is tested on real packed batches in ``tests/pooling/test_survey.py``.
"""

import pytest
import torch

from pp_demo.core import CASES, FIX, RULES, get_rule
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import pooled_positions

#                        left right lpic rpic unpadded all_pad trailing_eos
# A table, one row per line (the formatter would put one value per line).
# fmt: off
EXPECTED = {
    "count":              [3,   3,   2,   2,   5,       -1,     2],
    "first_pad_mod":      [5,   3,   5,   0,   5,        5,     2],
    "first_pad":          [-1,  3,  -1,   0,  -1,       -1,     2],
    "rightmost_non_pad":  [5,   3,   5,   3,   5,        0,     2],
    "rightmost_attended": [5,   3,   5,   3,   5,        0,     3],
    "attended_flip":      [5,   3,   5,   3,   5,        5,     3],
    "attended_cumsum":    [5,   3,   5,   3,   5,        0,     3],
}
# fmt: on
PACKED_ONLY = {"known_lengths"}  # needs cu_seqlens: no padded case can feed it
CASE_ORDER = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded", "all_pad", "trailing_eos"]


def test_every_rule_and_case_is_covered():
    padded = {name for name, rule in RULES.items() if "cu_seqlens" not in rule.needs}
    assert set(RULES) - padded == PACKED_ONLY
    assert set(EXPECTED) == padded
    assert list(CASES) == CASE_ORDER


@pytest.mark.parametrize("rule", EXPECTED)
@pytest.mark.parametrize("index", range(len(CASE_ORDER)), ids=CASE_ORDER)
def test_rule_on_case(rule, index):
    ids, mask = CASES[CASE_ORDER[index]].tensors()
    got = pooled_positions(rule, input_ids=ids, pad_token_id=0, attention_mask=mask)
    assert got.tolist() == [EXPECTED[rule][index]]
    assert got.dtype == torch.long


@pytest.mark.parametrize("rule", EXPECTED)
def test_rules_work_row_by_row_on_a_batch(rule):
    ids = torch.tensor([CASES[c].input_ids for c in CASE_ORDER[:6]])
    mask = torch.tensor([CASES[c].attention_mask for c in CASE_ORDER[:6]])
    got = pooled_positions(rule, input_ids=ids, pad_token_id=0, attention_mask=mask)
    assert got.tolist() == EXPECTED[rule][:6]


def test_the_fix_is_what_model_forward_pools():
    for case in CASES.values():
        ids, _ = case.tensors()
        assert pooled_positions(FIX, input_ids=ids, pad_token_id=0).tolist() == [case.forward_pools]


def test_true_last_comes_from_the_mask():
    # the two references disagree exactly on the trailing-eos and all-pad rows
    differ = [c.name for c in CASES.values() if c.true_last != c.forward_pools]
    assert differ == ["all_pad", "trailing_eos"]
    assert CASES["trailing_eos"].true_last == 3 and CASES["all_pad"].true_last is None


@pytest.mark.parametrize("rule", ["count", "first_pad_mod", "first_pad", "rightmost_non_pad"])
def test_no_pad_id_batch_of_one_pools_the_last_position(rule):
    got = pooled_positions(rule, input_ids=torch.tensor([[5, 6, 7]]), pad_token_id=None)
    assert got.tolist() == [2]


@pytest.mark.parametrize("rule", ["count", "first_pad_mod", "first_pad", "rightmost_non_pad"])
def test_no_pad_id_larger_batch_is_refused(rule):
    with pytest.raises(ValueError, match="pad_token_id is None"):
        pooled_positions(rule, input_ids=torch.tensor([[5, 6], [7, 8]]), pad_token_id=None)


@pytest.mark.parametrize("rule", list(EXPECTED))
@pytest.mark.parametrize(
    "bad, error, message",
    [
        (torch.tensor([5, 6, 0]), ValueError, "2-D"),
        (torch.zeros(1, 3, 2, dtype=torch.long), ValueError, "2-D"),
        (torch.tensor([[5.0, 6.0, 0.0]]), BadInput, "must hold integers|must be integer or bool"),
        (torch.zeros(1, 0, dtype=torch.long), ValueError, "empty"),
        ([[5, 6, 0]], BadInput, "must be a torch.Tensor, got list"),
    ],
    ids=["1-D", "3-D", "float", "empty", "list"],
)
def test_bad_ids_or_mask_get_a_clear_error(rule, bad, error, message):
    # the mask rules get the bad tensor as their mask, the id rules as their ids
    mask_rule = "attention_mask" in RULES[rule].needs
    inputs = {"attention_mask": bad} if mask_rule else {"input_ids": bad, "pad_token_id": 0}
    with pytest.raises(error, match=message):
        pooled_positions(rule, **inputs)


@pytest.mark.parametrize("rule", list(EXPECTED))
def test_mask_of_another_shape_is_refused(rule):
    with pytest.raises(ValueError, match="differs from input_ids"):
        pooled_positions(
            rule, input_ids=torch.tensor([[5, 6, 0]]), pad_token_id=0, attention_mask=torch.ones(1, 4, dtype=torch.long)
        )


def test_mask_with_other_values_is_refused():
    with pytest.raises(ValueError, match="only 0 and 1"):
        pooled_positions("rightmost_attended", attention_mask=torch.tensor([[1, 2, 0]]))


def test_mask_rule_without_a_mask_is_refused():
    with pytest.raises(ValueError, match="needs attention_mask"):
        pooled_positions("rightmost_attended", input_ids=torch.tensor([[5, 6]]), pad_token_id=0)


def test_unknown_rule_lists_the_known_ones():
    with pytest.raises(ValueError, match="rightmost_non_pad"):
        get_rule("last")


def test_positions_stay_on_the_input_device():
    ids = torch.tensor([[0, 5, 6]], device="meta")
    for name in ["count", "first_pad_mod", "first_pad", "rightmost_non_pad"]:
        assert RULES[name].fn(ids, 0).device.type == "meta"
