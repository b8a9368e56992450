"""explore(...) refuses what is not one row of whole numbers in one line (``BadInput``)."""

import pytest
import torch

from pp_demo.errors import BadInput
from pp_demo.workshop.explorer import explore


@pytest.mark.parametrize(
    "ids, expected",
    [
        (torch.tensor([[0, 0, 5]]), "1-D), got a torch.int64 tensor of shape (1, 3) (one row of a batch: ids[0])"),
        (torch.tensor([0.0, 5.0]), "got a torch.float32 tensor of shape (2,)"),
        (None, "a sequence of whole numbers or a string like '0 0 5 6', got None"),
        (5, "a sequence of whole numbers or a string like '0 0 5 6', got 5"),
    ],
    ids=["a batch of one row", "float tensor", "None", "a number"],
)
def test_what_is_not_one_row_is_refused_in_one_line(ids, expected):
    with pytest.raises(BadInput) as refused:
        explore(ids)
    assert expected in str(refused.value) and "\n" not in str(refused.value)


def test_one_row_as_a_tensor_is_explored_like_the_same_list():
    # the review table's first row: the fix pools position 5, the count rule position 3
    row = [0, 0, 5, 6, 7, 8]
    assert explore(torch.tensor(row)).positions == explore(row).positions
    assert explore(torch.tensor(row)).positions["count"] == 3


def test_a_pad_id_past_a_long_says_the_limit():
    with pytest.raises(BadInput, match=r"0\.\.2\*\*63-1"):
        explore("0 0 5", pad_token_id=2**63)
    assert explore("0 0 5", pad_token_id=2**63 - 1).case.true_last == 2
