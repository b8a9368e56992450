"""Exercises of notebook 05 · training (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import count_pools, index_list, int_list, register, true_last, wrong_answer

_LABELS_05 = 3  # labels of the training task: the last real token's id modulo 3
# exercises 05.1 and 05.3: five real tokens, the count rule pools position 4, the 27 (class 0).
# Chosen so that no slip lands on the right numbers: the pooled class differs from the position's
# own (4 % 3 = 1), from the token (27) and from the label (11 % 3 = 2); the first real token's class
# (16 % 3 = 1) is not the label; every id appears once.
_ROW_05 = ((0, 0, 0, 16, 27, 13, 10, 11), (0, 0, 0, 1, 1, 1, 1, 1))
_LENGTH_05 = 8  # row length of the training task
# the worked row a wrong try of 05.1 gets: laid out otherwise, its answer (1, 5, 1) shares no value
# with 05.1's, and its pooled class is not the position's (5 % 3 = 2)
_WORKED_05 = ((0, 0, 14, 25, 7, 22, 9, 31), (0, 0, 1, 1, 1, 1, 1, 1))


@register(
    "05.1",
    "The row [0,0,0,16,27,13,10,11] (mask [0,0,0,1,1,1,1,1]) of the training task: give its label, the "
    "position the count rule pools, and the class of the token there: three ints.",
    solution=(2, 4, 0),
    why=(
        "last real token 11 -> 11 % 3 = 2; five real tokens, minus one: position 4, the token 27 -> 0. "
        "Training on this row pulls the 27's hidden state towards the label 2"
    ),
    wrong=(
        wrong_answer((2, 5, 1), "counts the real tokens but forgets the minus one"),
        wrong_answer((2, 7, 2), "assumes the count rule pools the last real token on a left-padded row"),
        wrong_answer((2, 4, 1), "reads the class off the position (4 % 3) instead of the token there"),
        wrong_answer((0, 4, 2), "gives the label and the pooled class the other way round"),
    ),
    debrief=(
        "ask for the wrong first tries: position 5 (no minus one) or 7 (the last real token, where "
        "model.forward pools), or class 1 (the position's, not the token's). The count rule pools position 4, the "
        "27, class 0, while the label is 2: every step on this row trains the head to read class 2 off a token "
        "of class 0. That is the "
        "damage the count rule does to training; on rows with fewer real tokens it pools a pad (05.2)"
    ),
)
def _judge_label_position_class(answer: object) -> str | None:
    said = int_list(answer)
    if said is None or len(said) != 3:
        return "give three ints: (the row's label, the position the count rule pools, the class of the token there)"
    ids, mask = _ROW_05
    last = true_last(mask)
    assert last is not None  # the exercise's row has real tokens
    pooled = count_pools(ids, PAD)
    if tuple(said) == (ids[last] % _LABELS_05, pooled, ids[pooled] % _LABELS_05):
        return None
    # one worked row for every wrong try, so the message never says which of the three to change
    other_ids, other_mask = _WORKED_05
    other_last = true_last(other_mask)
    assert other_last is not None
    other_pooled = count_pools(other_ids, PAD)
    worked = (other_ids[other_last] % _LABELS_05, other_pooled, other_ids[other_pooled] % _LABELS_05)
    return (
        f"take your three steps on another row of the task, {row_text(other_ids)} (mask {row_text(other_mask)}): "
        f"its answer is {worked}. Do you get that?"
    )


@register(
    "05.2",
    "A left-padded row of the training task has length 8 and r real tokens (r = 2..7). For "
    "which r does the count rule pool a pad? A list (or set) of ints.",
    solution=[2, 3, 4],
    why="real tokens start at 8 - r, the count rule pools r - 1: a pad while 2r <= 8",
    wrong=(
        wrong_answer([2, 3], "an off-by-one at the boundary: r = 4 pools position 3, still a pad"),
        wrong_answer(
            [2, 3, 4, 5, 6, 7],
            "thinks every left-padded row pools a pad; with many real tokens it pools a real, wrong one",
        ),
    ),
)
def _judge_pad_pooled_counts(answer: object) -> str | None:
    counts = int_list(answer)
    if counts is None:
        return "give the numbers of real tokens as a list of ints, e.g. [2, 7]"
    for r in counts:
        if not 2 <= r <= _LENGTH_05 - 1:
            return f"a left-padded row of the task has 2 to {_LENGTH_05 - 1} real tokens, not {r}"
    for r in range(2, _LENGTH_05):
        row = [PAD] * (_LENGTH_05 - r) + list(range(5, 5 + r))  # left-padded, r real tokens
        if (r in counts) != (row[count_pools(row, PAD)] == PAD):
            return f"your answer misjudges r={r}, a row like {row_text(row)}: where does the count rule land on it?"
    return None


@register(
    "05.3",
    "The row [0,0,0,16,27,13,10,11] (mask [0,0,0,1,1,1,1,1]) goes through the count-rule "
    "pipeline. Its logits can depend on the input (token) at which positions? A list of ints.",
    solution=[3, 4],
    why="the count rule pools position 4; it sees itself and the real token before it",
    wrong=(
        wrong_answer([7], "expects the logits to come from the last real token: the count rule pools position 4"),
        wrong_answer([4], "forgets that attention mixes every earlier real token into the pooled position"),
        wrong_answer([0, 1, 2, 3, 4], "forgets that the mask keeps the pads out of attention as keys"),
    ),
)
def _judge_visible_positions(answer: object) -> str | None:
    answer = index_list(answer, _LENGTH_05, "positions")
    if isinstance(answer, str):
        return answer
    ids, mask = _ROW_05
    # the count rule's logits depend on the pooled position and the real tokens before it: causal
    # attention hides later positions, the mask hides pads from real queries on every transformers
    # version
    want = [p for p in range(count_pools(ids, PAD) + 1) if mask[p]]
    pooled = want[-1]
    if set(answer) == set(want):
        return None
    later = [p for p in answer if p > pooled]
    pads = [p for p in answer if not mask[p]]
    row = f"{row_text(ids)} (mask {row_text(mask)})"
    if later:
        return (
            f"on {row} your answer holds a position after the one the count rule pools, the token "
            f"{ids[later[0]]}: attention is causal, nothing later reaches the pooled position"
        )
    if pads:
        return (
            f"on {row} your answer holds a pad (mask 0): the pooled token is a real one, and the mask hides "
            "every pad from it"
        )
    return (
        f"on {row} your answer leaves out a position: the pooled token sees itself and every real token before "
        "it (find where the count rule pools first)"
    )
