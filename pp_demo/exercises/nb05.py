"""Exercises of notebook 05 · training (checked by ``pp_demo.exercises.check``)."""

from pp_demo.core import PAD
from pp_demo.pooling.padding_table import row_text

from .core import count_pools, index_list, int_list, int_pair, register, true_last, wrong_answer

_LABELS_05 = 3  # labels of the training task: the last real token's id modulo 3
_ROW_05 = ((0, 0, 0, 17, 4, 22, 9, 14), (0, 0, 0, 1, 1, 1, 1, 1))  # exercise 05.1
_LENGTH_05 = 8  # row length of the training task


@register(
    "05.1",
    "The row [0,0,0,17,4,22,9,14] (mask [0,0,0,1,1,1,1,1]) of the training task: give "
    "(its label, the class of the token the count rule pools), a pair of ints.",
    solution=(2, 1),
    why="last real token 14 -> 14 % 3 = 2; five real tokens: position 4, token 4 -> 1",
    wrong=(
        wrong_answer((2, 2), "assumes the count rule pools the last real token on a left-padded row"),
        wrong_answer((1, 2), "gives the pair in the wrong order, or takes the label from the pooled token"),
    ),
)
def _judge_label_and_pooled_class(answer: object) -> str | None:
    pair = int_pair(answer)
    if pair is None:
        return "give a pair of ints: (the row's label, the class of the token the count rule pools)"
    label, pooled_class = pair
    ids, mask = _ROW_05
    last = true_last(mask)
    assert last is not None  # the exercise's row has real tokens
    want_label = ids[last] % _LABELS_05
    want_pooled = ids[count_pools(ids, PAD)] % _LABELS_05
    row = row_text(ids)
    if label != want_label:
        return f"on {row} your label is off: the label is the class (id modulo 3) of the last real token"
    if pooled_class != want_pooled:
        what = "is off"
        if pooled_class == want_label:
            what = "is the label's, as if the count rule pooled the last real token"
        return (
            f"on {row} your pooled class {what}. Find the position the count rule pools (it counts the real "
            "tokens), then the class of the token there"
        )
    return None


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
    "The row [0,0,0,17,4,22,9,14] (mask [0,0,0,1,1,1,1,1]) goes through the count-rule "
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
