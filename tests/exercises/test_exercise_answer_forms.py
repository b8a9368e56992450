"""Judges take an answer's structure as the question asks: a pair is ordered,
positions are integers within the row, token ids are in the vocabulary, and a function answer is
judged on more than one pad id and across threads, never passed by the workbook's own answer.

Expected values come from the definitions: on [0,0,5,6,0,7,8,0] (pad id 0) the count rule pools 3
(four non-pad ids, minus one) and model.forward 6 (the rightmost non-pad id); the tiny models'
vocabulary holds the ids 0 to 31 (``vocab_size=32`` in every family of ``pp_demo.core``).
"""

import concurrent.futures
import threading

import pytest
import torch

from pp_demo.core import FAMILIES, rightmost_non_pad
from pp_demo.exercises import EXERCISES, status


@pytest.mark.parametrize(
    "answer", [{6, 3}, {3, 6}, frozenset((3, 6)), {3: 6}], ids=["set", "set-right", "frozen", "dict"]
)
def test_03_2_an_unordered_pair_is_refused(answer):
    said = status("03.2", answer)
    assert said.startswith("not yet: a ") and "has no order: give a tuple" in said


@pytest.mark.parametrize("answer", [(3, 6), [3, 6], torch.tensor([3, 6])])
def test_03_2_an_ordered_pair_is_judged(answer):
    assert status("03.2", answer) == "correct"
    assert status("03.2", answer[::-1] if not isinstance(answer, torch.Tensor) else answer.flip(0)) != "correct"


def _from_the_right_fixed_on_zero(input_ids, pad_token_id):
    from_the_right = (input_ids != 0).flip(-1).int().argmax(-1)  # pad_token_id ignored: 0 hard-coded
    return input_ids.shape[-1] - 1 - from_the_right


def test_01_1_a_rule_that_hard_codes_pad_id_0_fails_on_another_pad_id():
    said = status("01.1", _from_the_right_fixed_on_zero)
    assert said.startswith("not yet: on row ") and "of a batch whose pad id is 1" in said


def _fix_in_a_thread(input_ids, pad_token_id):
    box = []
    worker = threading.Thread(target=lambda: box.append(rightmost_non_pad(input_ids, pad_token_id)))
    worker.start()
    worker.join()
    return box[0]


def _fix_in_a_pool(input_ids, pad_token_id):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(rightmost_non_pad, input_ids, pad_token_id).result()


@pytest.mark.parametrize("rule", [_fix_in_a_thread, _fix_in_a_pool], ids=["thread", "pool"])
def test_01_1_the_packages_rule_called_from_a_thread_is_refused(rule):
    said = status("01.1", rule)
    assert said == "not yet: your answer calls pp_demo.core.rightmost_non_pad: write it yourself from the definition"


def test_01_1_the_records_own_solution_is_refused_as_an_answer():
    solution = EXERCISES["01.1"].solution
    assert status("01.1", solution).startswith("not yet: your answer calls pp_demo.exercises.nb01.")
    assert status("01.1", lambda ids, pad: solution(ids, pad)).startswith("not yet: your answer calls")


def _positions_where(input_ids, pad_token_id):
    positions = torch.where(input_ids != pad_token_id, torch.arange(input_ids.shape[-1]), -1)
    return positions.max(-1).values


def test_01_1_an_arange_route_without_a_product_is_not_said_to_multiply():
    said = status("01.1", _positions_where)
    assert said.startswith("not yet: that reads positions off arange")
    assert "multiplies" not in said


def _true_last(ids, mask, pad):
    return (torch.arange(ids.shape[-1]) * mask).argmax(-1)


@pytest.mark.parametrize(
    "rule, says",
    [
        (lambda ids, mask, pad: _true_last(ids, mask, pad) + 0.4, "torch.float32 values: a position indexes a tensor"),
        (lambda ids, mask, pad: _true_last(ids, mask, pad) + ids.shape[-1], "past the row's last position"),
        (lambda ids, mask, pad: _true_last(ids, mask, pad) - ids.shape[-1], "a negative position"),
    ],
    ids=["plus-0.4", "plus-L", "minus-L"],
)
def test_04_2_positions_are_integers_within_the_row(rule, says):
    said = status("04.2", rule)
    assert said.startswith("not yet: on left [0,0,5,6,7,8]") and says in said
    assert status("04.2", _true_last) == "correct"  # the same rule, unshifted


VOCAB = FAMILIES["llama"].tiny["vocab_size"]


@pytest.mark.parametrize("token", [-1, -3, 10**30, VOCAB])
def test_07_2_and_01_2_token_ids_outside_the_vocabulary_are_refused(token):
    rows = {"07.2": ([5, 6, token, token], [1, 1, 0, 0]), "01.2": ([5, 0, token, 0, 0], [1, 1, 1, 0, 0])}
    for key, row in rows.items():
        said = status(key, row)
        assert (
            said == f"not yet: {token} is not a token id: ids run from 0 to {VOCAB - 1} (the tiny models' vocabulary)"
        )


def test_the_last_id_of_the_vocabulary_is_a_token():
    last = VOCAB - 1
    assert status("07.2", ([5, 6, last, last], [1, 1, 0, 0])) == "correct"
    assert status("01.2", ([5, 0, last, 0, 0], [1, 1, 1, 0, 0])) == "correct"
