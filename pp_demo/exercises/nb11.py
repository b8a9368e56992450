"""Exercises of notebook 11 · DeepSpeed's pipeline engine (checked by ``pp_demo.exercises.check``)."""

import torch

from .core import PAD, count_misses, judge_picked_rows, plain_int, register, wrong_answer

# exercise 11.1: a micro-batch of the engine's last stage pooling with the count rule; pad id 0.
# None of these rows is the notebook's own batch.
_ENGINE_ROWS = ((0, 3, 4, 5, 6, 7), (3, 4, 5, 6, 0, 0), (0, 0, 3, 0, 4, 5), (3, 4, 0, 5, 6, 0))
_HOW = "count its non-pad ids minus one for the count rule; model.forward pools the rightmost non-pad id"


@register(
    "11.1",
    "DeepSpeed's last stage pools with the count rule (non-pad ids minus one). On which rows of the "
    "micro-batch [0,3,4,5,6,7], [3,4,5,6,0,0], [0,0,3,0,4,5] and [3,4,0,5,6,0] (pad id 0) do its "
    "logits differ from model.forward's? A list of row indices.",
    solution=[0, 2, 3],
    why=(
        "the count lands on the rightmost non-pad id only when no pad id comes before it: row 1 (pads at "
        "the end) matches; rows 0 and 2 have pads in front, row 3 a pad id inside its text"
    ),
    wrong=(
        wrong_answer([0, 2], "thinks only left padding fools the count: a pad id inside the text does too (row 3)"),
        wrong_answer([0, 1, 2, 3], "thinks the engine changes every row: it runs the same stages, pooling aside"),
    ),
)
def _judge_engine_rows(answer: object) -> str | None:
    return judge_picked_rows(answer, _ENGINE_ROWS, count_misses, _HOW)


# a counterexample of another layer: four tensors handed on, one more of them floating point
_FOUR = (
    "a layer that hands on (hidden, input_ids, attention_mask, scale) with input_ids [[5,6,7]], "
    "mask [[1,1,1]] and a float scale, each asked its dtype"
)


def _with_a_gradient() -> int:
    """What the engine sends back for the first layer's (hidden, input_ids, attention_mask): a
    gradient for each floating-point tensor, none for an integer one."""
    hidden, ids = torch.zeros(2, 6, 16), torch.tensor([[PAD, 5, 6, 7, 8, 9]] * 2)
    return sum(t.is_floating_point() for t in (hidden, ids, torch.ones_like(ids)))


@register(
    "11.2",
    "The first stage's layer returns (hidden, input_ids, attention_mask) to the engine, which sends "
    "all three to the last stage. In train_batch, for how many of them does the last stage send a "
    "gradient back? Give an int.",
    solution=1,
    why="only the hidden states are floating point; ids and mask are integers, which carry no gradient",
    wrong=(
        wrong_answer(3, "thinks every tensor sent forward gets a gradient back: integers have none"),
        wrong_answer(0, "thinks the ids and mask riding along stop the gradient: the hidden states still get theirs"),
    ),
)
def _judge_gradients_back(given: object) -> str | None:
    answer = plain_int(given, "a number of tensors as an int")
    if isinstance(answer, str):
        return answer
    wanted = _with_a_gradient()
    if answer == wanted:
        return None
    if answer == 3:
        return f"3 counts the ids and the mask too: an integer tensor has no gradient. Try your way on {_FOUR}"
    return f"{answer} is not it: try your way on {_FOUR}: which of the four are floating point? Those get a gradient"
