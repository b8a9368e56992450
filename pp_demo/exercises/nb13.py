"""Exercises of notebook 13 · training in depth (checked by ``pp_demo.exercises.check``)."""

import math

from .core import plain_number, register, wrong_answer

_LABELS_13 = 3  # labels of the training task


@register(
    "13.1",
    "On transformers 5.24.0 the count rule's logits on a row it pools at a pad are all zero. With 3 "
    "labels, what cross-entropy loss does such a row give? A float, to two decimals.",
    solution=round(math.log(_LABELS_13), 2),
    why=(
        "zero logits are a uniform softmax, 1/3 for every label: the loss is -ln(1/3) = ln 3 = 1.10 whatever "
        "the label, and its gradient with respect to the weights is zero, so these rows drop out of training"
    ),
    wrong=(
        wrong_answer(0.0, "reads zero logits as zero loss"),
        wrong_answer(0.69, "takes ln 2, the loss of a uniform guess between two labels"),
        wrong_answer(1.58, "takes log base 2 of 3: cross-entropy in torch is in nats"),
    ),
)
def _judge_uniform_loss(answer: object) -> str | None:
    value = plain_number(answer, "the loss as a float, e.g. 0.42")
    if isinstance(value, str):
        return value
    if abs(value - math.log(_LABELS_13)) < 0.006:
        return None
    four = math.log(4)
    return (
        f"try your way with four labels, logits [0, 0, 0, 0]: every label gets the same probability, and cross-entropy "
        f"is minus the natural log of the label's probability, {four:.2f}. Same steps with three?"
    )
