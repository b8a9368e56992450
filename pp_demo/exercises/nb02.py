"""Exercises of notebook 02 · the two-stage pipeline (checked by ``pp_demo.exercises.check``)."""

from .core import register, wrong_answer

_GOT = ("hidden", "input_ids", "attention_mask")


@register(
    "02.1",
    "The last stage gets hidden, input_ids and attention_mask. Read its forward: "
    "which one would it not need if it pooled with rightmost_attended?",
    solution="input_ids",
    why="only a pad-id rule reads them; the layers run on the hidden states",
    wrong=(
        wrong_answer(
            "attention_mask", "forgets that the last stage's layers use the mask too, to keep padding out of attention"
        ),
        wrong_answer("hidden", "thinks of the last stage as pooling only: its layers start from the hidden states"),
    ),
)
def _judge_unneeded_tensor(name: object) -> str | None:
    if name not in _GOT:
        return f"{name!r} is not one of the tensors the last stage gets: {', '.join(_GOT)}"
    if name == "hidden":
        return (
            "on any row, [5,6,7,8,0,0] say, the last stage's layers start from the hidden states: "
            "without them there is nothing to run"
        )
    if name == "attention_mask":
        return (
            "on the left row [0,0,5,6,7,8] the last stage's layers need it too, to keep the two pads out of attention"
        )
    return None
