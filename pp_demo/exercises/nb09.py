"""Exercises of notebook 09 · the pull request (checked by ``pp_demo.exercises.check``)."""

from typing import Any

from pp_demo.records.pull_request import claim_batches

from .core import count_misses, first_pad_misses, judge_picked_rows, register, wrong_answer

ROWS_09 = (
    [5, 6, 0, 0, 0, 0],
    [0, 5, 6, 7, 0, 0],
    [0, 0, 0, 5, 0, 6],
    [5, 0, 0, 6, 7, 8],
    [5, 6, 7, 8, 9, 0],
    [0, 0, 5, 6, 7, 0],
)
"""Six rows (pad id 0) for exercise 09.1."""


@register(
    "09.1",
    "Which rows of ROWS_09 (their indices) does GPT-2's unpatched pipeline forward pool "
    "at a different position than model.forward?",
    solution=[1, 3, 5],
    why=(
        "wrong when the first pad follows a real token and a real token follows it (3), or when the row "
        "starts and ends with a pad (1, 5); 0, 2 and 4 are fine (the condition as code: "
        "pp_demo.instruments.pull_request.claims.first_pad_wrong)"
    ),
    wrong=(
        wrong_answer([1, 3], "sees the pad id among the text but not a row that starts and ends with a pad (row 5)"),
        wrong_answer(
            [0, 1, 3, 5],
            "thinks any pad after the text is wrong; with nothing after the first pad, one before it is right",
        ),
    ),
)
def _judge_first_pad_rows(answer: Any) -> str | None:
    how = "step back one from its first pad id (wrapping to the row's end), and compare with its rightmost non-pad id"
    return judge_picked_rows(answer, ROWS_09, first_pad_misses, how)


_SIDES = ("left", "right")
_FAMILIES = ("llama", "qwen2", "opt")
_KEEP_THE_COUNT = ("llama", "opt")  # 09.2: the change is applied to qwen2.py only


@register(
    "09.2",
    "The change is applied to qwen2.py only; llama.py and opt.py keep the count. Which "
    "(family, side) pairs fail the test of claim 2? A set of tuples like ('llama', 'right').",
    solution={("llama", "left"), ("opt", "left")},
    why="each file its own count; wrong only where pads come first",
    wrong=(
        wrong_answer(
            {("llama", "left"), ("qwen2", "left"), ("opt", "left")},
            "copies the unpatched line of claim 2: qwen2's own file has the change",
        ),
        wrong_answer(
            {("llama", "left"), ("llama", "right"), ("opt", "left"), ("opt", "right")},
            "forgets that the old count is right on right padding",
        ),
        wrong_answer(
            {("qwen2", "left")}, "reads the question the other way round: qwen2 is the family with the change"
        ),
    ),
)
def _judge_qwen2_only(answer: Any) -> str | None:
    try:
        pairs = {(str(f), str(s)) for f, s in answer}
    except (TypeError, ValueError):
        return "give a set of (family, side) tuples, e.g. {('llama', 'right')}"
    unknown = [p for p in pairs if p[0] not in _FAMILIES or p[1] not in _SIDES]
    if unknown:
        return f"{unknown[0]} is not a pair of a family in {_FAMILIES} and a side in {_SIDES}"
    # from the definitions: a family fails on a side when its forward still counts and the count
    # lands off the last non-pad id on a row of that side's test batch (claim 2's rows, from
    # claim_batches)
    test = claim_batches()
    missed = {side: any(count_misses(row) for row in test[f"{side}-padded"][0].tolist()) for side in _SIDES}
    truth = {(family, side) for family in _KEEP_THE_COUNT for side in _SIDES if missed[side]}
    for family, side in sorted(pairs ^ truth):
        return (
            f"your answer misjudges {family} with {side} padding: does {family}.py have the change, and is the "
            f"count right on the {side}-padded batch?"
        )
    return None
