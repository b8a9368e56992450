"""The exercise convention: one status line, never an exception, answers tested here."""

import pytest
import torch

from pp_demo.exercises import EXERCISES, check, status
from pp_demo.exercises.solutions import SOLUTIONS


def test_every_exercise_has_a_reference_solution():
    assert set(SOLUTIONS) == set(EXERCISES)


@pytest.mark.parametrize("key", sorted(SOLUTIONS))
def test_reference_solution_is_correct(key, capsys):
    solution = SOLUTIONS[key]
    name = f"{getattr(solution, '__module__', '')}.{getattr(solution, '__qualname__', '')}"
    if name in EXERCISES[key].refuse:  # a function the reader could pass as it is: right by its judge, refused
        assert EXERCISES[key].judge(solution) is None
        assert status(key, solution).startswith(f"not yet: your answer calls {name}: write it yourself")
        return
    assert check(key, solution) is None  # the cell shows the printed line only
    assert capsys.readouterr().out == f"[{key}] correct\n"


@pytest.mark.parametrize("key", sorted(SOLUTIONS))
def test_an_unfilled_stub_is_not_attempted(key):
    assert status(key, ...) == "not attempted yet"


def test_a_function_stub_returning_ellipsis_is_not_attempted():
    assert status("01.1", lambda ids, pad: ...) == "not attempted yet"


@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        (
            "01.1",
            lambda ids, pad: (ids != pad).sum(-1) - 1,
            "on row 0 [0,0,5,6,7,8] of the length-6 padding cases as one batch "
            "your rule pools 3, model.forward pools 5",
        ),
        (
            "01.1",
            lambda ids, pad: ids.shape[-1] - (ids != pad).flip(-1).int().argmax(-1),
            "on row 0 [0,0,5,6,7,8] of the length-6 padding cases as one batch "
            "your rule returns 6, past the row's last position, 5",
        ),
        ("01.2", "left", "lands on 5: the true last real token"),
        ("01.2", "no_such_case", "is not a padding case"),
        ("01.2", ([5, 0], [1]), "of one length"),
        ("01.3", 3, "is not what the count rule pools"),
        ("01.3", "4", "as an int"),
    ],
)
def test_a_wrong_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_an_answer_that_raises_is_reported_not_raised():
    def broken(ids, pad):
        raise RuntimeError("typo")

    assert status("01.1", broken) == "not yet: your answer raised RuntimeError: typo"


def test_an_unknown_exercise_is_reported_not_raised():
    assert status("99.9", 1).startswith("no exercise '99.9'")


def test_01_1_is_judged_on_rows_with_a_non_pad_id_only():
    # the first hour's fill-in: the all-pad row (where model.forward pools 0) is notebook 04's
    from pp_demo.exercises import nb01

    rows = [(row, pad) for batch, _, pad in nb01._batches_for_01_1() for row in batch]
    assert len(rows) > 20 and all(any(t != pad for t in row) for row, pad in rows)
    assert SOLUTIONS["01.1"](torch.tensor([[0, 0, 5, 6, 7, 8], [5, 6, 7, 8, 0, 0]]), 0).tolist() == [5, 3]


# ---- notebook 02


@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("10.1", 4, "counts both stages together"),
        ("10.1", 1, "the forwards-only answer"),
        ("10.1", 3, "the step lasts 10 slots"),
        ("10.1", "2", "as an int"),
        ("10.2", lambda m, p: 1 / m, "for m=1, p=2 you return 1.0: draw that step"),
        (
            "10.2",
            lambda m, p: 1 / (m + 1),
            "for m=1, p=3 you return 0.5: draw that step",
        ),
        ("10.2", lambda m: 1 / (m + 1), "takes the number of micro-batches and of stages"),
        ("10.2", 0.2, "should be a function"),
        ("02.1", [0, 1, 3], "rows like [21,22,23,24,25,26,0] (mask [1,1,1,1,1,1,0])"),
        ("02.1", [4], "there is no row 4"),
        ("02.1", "attention_mask", "give the rows as a list of ints"),
    ],
)
def test_notebook_02_wrong_answers_get_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_notebook_02_function_stub_returning_ellipsis_is_not_attempted():
    assert status("10.2", lambda m, p: ...) == "not attempted yet"


def test_notebook_02_solutions_agree_with_the_gpipe_timeline():
    from pp_demo.ranks.schedules import gpipe_slots

    for p in (2, 3, 4):
        for m in (1, 4, 8):
            slots = gpipe_slots(m, p)
            length = max(slot for _, slot, _, _ in slots) + 1
            busy = [sum(s == stage for s, *_ in slots) for stage in range(p)]
            assert busy == [m] * p
            assert SOLUTIONS["10.2"](m, p) == pytest.approx(1 - m / length)
    backward = gpipe_slots(4, backward=True)
    length = max(slot for _, slot, _, _ in backward) + 1
    assert all(length - sum(s == stage for s, *_ in backward) == SOLUTIONS["10.1"] for stage in (0, 1))


@pytest.mark.parametrize("family", ["llama", "qwen2", "opt"])
def test_notebook_02_a_mask_of_ones_on_the_last_stage_changes_exactly_the_solution_rows(family):
    # 02.1 measured in the model itself, not derived: the first stage gets the true mask, the
    # last stage (pooling as model.forward does) a mask of ones; the rows whose logits move
    from pp_demo.core import build_model, split_model

    ids = torch.tensor(
        [[0, 5, 6, 7, 8, 9], [5, 6, 7, 8, 9, 0], [0, 5, 6, 7, 8, 9], [5, 6, 0, 7, 8, 0]]
    )  # the question's
    mask = torch.tensor([[0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 1, 0]])
    first, last = split_model(build_model(family), rule="rightmost_non_pad")
    with torch.no_grad():
        hidden = first(ids, mask)
        moved = (last(hidden, ids, torch.ones_like(mask)) - last(hidden, ids, mask)).abs().amax(-1)
    assert [row for row in range(4) if moved[row] > 1e-6] == SOLUTIONS["02.1"]
    assert moved[SOLUTIONS["02.1"]].min() > 1e-4  # far from rounding: a pad's hidden state read


# ---- notebook 03: expected answers written by hand from the rows (count - 1 vs rightmost non-pad)
@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("03.1", [False, True, False, False], "rows like [21,22,23,24,25,26,0], where the count rule matches"),
        ("03.1", [True, False], "the batch has 4 rows, your list has 2"),
        ("03.1", [1, 0, 0], "a list of True or False"),
        ("03.2", (6, 6), "your count-rule position is off, as if it looked for the last real token"),
        ("03.2", (3, 5), "on [0,0,5,6,0,7,8,0] your model.forward position is off"),
        ("03.2", (6, 3), "on [0,0,5,6,0,7,8,0] your count-rule position is off: the count rule counts"),
        ("03.2", (True, 6), "a pair of ints"),
        ("03.2", 3, "a pair of ints"),
        ("03.3", [1, 3], "row 4 [5,6,0,7,0,0] is misjudged"),
        ("03.3", [1, 2, 3, 4], "row 2 [9,0,0,0,0,0] is misjudged"),
        ("03.3", [7], "there is no row 7"),
        ("03.3", "1", "a list of ints"),
    ],
)
def test_a_wrong_notebook_03_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_notebook_03_row_indices_may_come_in_any_order_or_as_a_set():
    assert status("03.3", {4, 1, 3}) == "correct"
    assert status("03.3", (4, 3, 1)) == "correct"


# ---- notebook 07: counterexamples written by hand from the cases (pad 0)
@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("07.1", "a", "on left [0,0,5,6,7,8] class a (count) and the expression pool different positions"),
        (
            "07.1",
            "b",
            "on right_pad_in_content [5,0,7,8,0,0] class b (first_pad_mod) and the expression pool different",
        ),
        ("07.1", "d", "on trailing_eos [5,6,7,0] class d (rightmost_attended) and the expression pool different"),
        ("07.1", "e", "reads input_ids"),
        ("07.1", "f", "not a class"),
        ("07.1", ["c"], "not a class"),
        ("07.2", "left", "on left [0,0,5,6,7,8] both pool 5"),
        ("07.2", "all_pad", "marks no real token"),
        ("07.2", ([5, 6], [0, 0]), "marks no real token"),
        ("07.2", ([5, 6, 0], [1, 1, 0]), "both pool 1"),
        ("07.2", "trailing_eos", "that is the trailing-eos row the notebook showed"),
        ("07.2", ([5, 0], [1, 1]), "that is the trailing-eos row the notebook showed"),
        ("07.2", ([5, 6], [1]), "of one length"),
        ("07.2", ([5, 6], [1, 2]), "only 0 and 1"),
        ("07.2", "tail", "not a padding case"),
        ("07.2", 7, "a pair (input_ids, attention_mask)"),
    ],
)
def test_a_wrong_notebook_07_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_07_2_says_why_padding_may_not_carry_the_pad_id():
    # the question and the hint name the real set-up, a tokenizer padding with a pad token
    # of its own while the config's pad_token_id (what class c looks for) is another id
    from pp_demo.exercises.core import EXERCISES

    assert "tokenizer pads with its own pad token" in EXERCISES["07.2"].question
    assert "pad_token_id" in EXERCISES["07.2"].question
    assert "a tokenizer with a pad token of its own" in status("07.2", ([5, 6, 0], [1, 1, 0]))
    assert status("07.2", ([5, 6, 9, 9], [1, 1, 0, 0])) == "correct"


@pytest.mark.parametrize(
    "row",
    [
        ([5, 6, 9, 9], [1, 1, 0, 0]),  # padded with a non-pad id: c pools 3, d pools 1
        ([0, 7, 3], [0, 1, 0]),  # left pad 0, right pad 3: c pools 2, d pools 1
    ],
)
def test_notebook_07_any_row_that_separates_c_from_d_is_correct(row):
    assert status("07.2", row) == "correct"


# ---- notebook 04: counterexamples written by hand from the rows (pad id 0 = eos id)
@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("04.1", [0], "row 3 [5,6,0,0] with mask [1,1,1,0] is misjudged"),
        ("04.1", [0, 2, 3], "row 2 [5,0,6,0] with mask [1,1,1,0] is misjudged"),
        ("04.1", [3], "row 0 [5,6,7,0] with mask [1,1,1,1] is misjudged"),
        ("04.1", [0, 5], "there is no row 5"),
        ("04.1", "0", "a list of ints"),
        (
            "04.2",
            lambda ids, mask, pad: (torch.arange(ids.shape[-1]) * (ids != pad)).argmax(-1),
            "on trailing_eos [5,6,7,0] (mask [1,1,1,1]) your rule pools 2, the true last real token is 3",
        ),
        (
            "04.2",
            lambda ids, mask, pad: mask.sum(-1) - 1,
            "on left [0,0,5,6,7,8] (mask [0,0,1,1,1,1]) your rule pools 3, the true last real token is 5",
        ),
        (
            "04.2",
            lambda ids, mask, pad: mask[:, -1:].long() * (ids.shape[-1] - 1),
            "on left [0,0,5,6,7,8] (mask [0,0,1,1,1,1]) it returned",
        ),  # shape (1, 1), not one per row
        ("04.2", 3, "should be a function"),
        ("04.3", 4, "4 is where rightmost_non_pad pools"),
        ("04.3", 5, "5 is the true last real token"),
        ("04.3", 3, "3 is where the count rule pools"),
        ("04.3", 7, "7 is the last position"),
        ("04.3", 1.0, "as an int"),
    ],
)
def test_a_wrong_notebook_04_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_notebook_04_a_mask_rule_is_judged_on_every_row_of_a_batch():
    # right on each case alone but not per row: always the last real token of row 0
    def first_row_only(ids, mask, pad):
        last = int((torch.arange(ids.shape[-1]) * mask[0]).argmax())
        return torch.full((ids.shape[0],), last)

    assert status("04.2", first_row_only).startswith(
        "not yet: on row 2 of the batch of exercise 04.1 your rule pools 3, the true last real token is 2"
    )


def test_notebook_04_function_stub_returning_ellipsis_is_not_attempted():
    assert status("04.2", lambda ids, mask, pad: ...) == "not attempted yet"


def test_notebook_04_row_indices_may_come_as_a_set():
    assert status("04.1", {3, 0}) == "correct"


# ---- notebook 06: counterexamples written by hand from the rows (pad id 0)
@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("06.1", [1], "row 2 [0,5,6,7,0,0] is misjudged"),
        ("06.1", [0, 1, 2], "row 0 [0,0,5,6,7,8] is misjudged"),
        ("06.1", [5], "there is no row 5"),
        ("06.1", "1", "a list of ints"),
        ("06.2", [0, 1], "is causal attention, what model.forward's GPT-2 does"),
        ("06.2", [0, 1, 2, 3, 4, 5], "your answer holds padding"),
        ("06.2", [0, 1, 2], "leaves out a real token"),
        ("06.2", [6], "there is no position 6"),
        (
            "06.3",
            lambda mask: torch.ones(mask.shape[0], mask.shape[1], mask.shape[1], dtype=torch.bool).tril(),
            "on left (mask [0,0,1,1,1,1]): position 0 may attend to position 0 in your mask, but 0 is padding",
        ),
        (
            "06.3",
            lambda mask: mask.bool()[:, None, :].expand(-1, mask.shape[1], -1),
            "on left (mask [0,0,1,1,1,1]): position 0 may attend to position 2 in your mask, but 2 is a later position",
        ),
        (
            "06.3",
            lambda mask: torch.ones(mask.shape[0], mask.shape[1], mask.shape[1]).tril() * mask[:, None, :],
            "return True/False (dtype torch.bool)",
        ),
        ("06.3", lambda mask: mask.bool(), "a tensor of shape (1, 6), not (1, 6, 6)"),
        ("06.3", 3, "should be a function"),
    ],
)
def test_a_wrong_notebook_06_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_notebook_06_the_mask_is_judged_on_every_row_of_a_batch():
    # right on a single row of each case, wrong per row: always row 0's mask
    def first_row_only(mask):
        length = mask.shape[-1]
        row0 = torch.ones(length, length, dtype=torch.bool).tril() & mask[0].bool()[None, :]
        return row0.expand(mask.shape[0], -1, -1)

    assert status("06.3", first_row_only).startswith(
        "not yet: on the review table's four rows as one batch, row 1: position 0 may not attend to position 0"
    )


def _allowed_by_definition(mask_row):
    """Position i may attend j when j <= i and j is not padding: by loops, from the words."""
    length = len(mask_row)
    return [[j <= i and mask_row[j] == 1 for j in range(length)] for i in range(length)]


@pytest.mark.parametrize(
    "rows",
    [
        ["left", "right", "left_pad_in_content", "right_pad_in_content"],
        ["unpadded", "all_pad", "left", "right", "left", "unpadded"],
    ],
)
def test_notebook_06_solution_equals_the_causal_padding_definition_written_by_loops(rows):
    from pp_demo.core import as_batch

    _, mask = as_batch(rows)
    got = SOLUTIONS["06.3"](mask)
    assert got.tolist() == [_allowed_by_definition(row) for row in mask.tolist()]


def test_notebook_06_function_stub_returning_ellipsis_is_not_attempted():
    assert status("06.3", lambda mask: ...) == "not attempted yet"


# ---- notebook 05: expected answers written by hand from the task (label = last real token % 3, pad 0)
@pytest.mark.parametrize(
    "key, wrong, counterexample",
    [
        ("05.1", (1, 4, 0), "take your three steps on another row"),
        ("05.1", (2, 5, 1), "take your three steps on another row"),  # no minus one: the 13
        ("05.1", 2, "give three ints"),
        ("05.1", (2, 4, "1"), "give three ints"),
        ("05.1", (2, 1), "give three ints"),
        ("05.2", [2, 3], "your answer misjudges r=4, a row like [0,0,0,0,5,6,7,8]"),
        ("05.2", [2, 3, 4, 5], "your answer misjudges r=5, a row like [0,0,0,5,6,7,8,9]"),
        ("05.2", [2, 3, 4, 8], "2 to 7 real tokens, not 8"),
        ("05.2", "234", "a list of ints"),
        ("05.3", [0, 1, 2, 3, 4], "your answer holds a pad (mask 0)"),  # causal, but pads are keys too
        ("05.3", [3, 4, 5, 6, 7], "a position after the one the count rule pools, the token 13: attention is causal"),
        (
            "05.3",
            list(range(8)),
            "your answer holds a position after the one the count rule pools",
        ),  # the shortcut: everything
        ("05.3", [4], "your answer leaves out a position"),
        ("05.3", [3], "your answer leaves out a position"),
        ("05.3", "34", "a list of ints"),
    ],
)
def test_a_wrong_notebook_05_answer_gets_a_counterexample(key, wrong, counterexample):
    text = status(key, wrong)
    assert text.startswith("not yet:") and counterexample in text


def test_notebook_05_answers_hold_on_the_generated_training_rows():
    from pp_demo.core import count_minus_one, rightmost_non_pad
    from pp_demo.training.loop import make_batches

    batches = make_batches(20, batch_size=16, seed=0)
    ids = torch.cat([b.input_ids for b in batches])
    mask = torch.cat([b.attention_mask for b in batches])
    left = torch.cat([b.left_padded for b in batches])
    real = mask.sum(-1)
    pooled = count_minus_one(ids, 0)
    on_pad = mask[torch.arange(len(ids)), pooled] == 0
    # 05.2: on left-padded rows the count rule pools a pad exactly for the listed numbers of real tokens
    assert torch.equal(on_pad[left], torch.isin(real[left], torch.tensor(SOLUTIONS["05.2"])))
    # on every other row (right-padded or full) the count rule pools where model.forward does
    assert torch.equal(pooled[~left], rightmost_non_pad(ids, 0)[~left])


def test_notebook_05_the_count_rule_logits_depend_on_exactly_the_solution_positions():
    # measured, not derived: nudge the embedding at one position at a time (the ids, hence the
    # pooled position, stay the same) and see whether the pipeline's logits move
    from pp_demo.core import split_model
    from pp_demo.training.loop import fresh_model

    ids = torch.tensor([[0, 0, 0, 16, 4, 27, 9, 14]])
    mask = (ids != 0).long()
    stages = split_model(fresh_model(), 2, rule="count")
    nudge = {}
    stages.first.body.embed_tokens.register_forward_hook(lambda module, args, out: out + nudge.get("at", 0))
    with torch.no_grad():
        base = stages.last(stages.first(ids, mask), ids, mask)
        moved = []
        for p in range(8):
            nudge["at"] = torch.zeros(1, 8, 1)
            nudge["at"][0, p] = 1.0
            moved.append(not torch.allclose(stages.last(stages.first(ids, mask), ids, mask), base, atol=1e-6, rtol=0))
    assert [p for p in range(8) if moved[p]] == SOLUTIONS["05.3"]


def test_notebook_05_a_row_index_set_is_accepted():
    assert status("05.2", {4, 3, 2}) == "correct"
