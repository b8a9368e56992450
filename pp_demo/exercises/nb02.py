"""Exercises of notebook 02 · the two-stage pipeline (checked by ``pp_demo.exercises.check``)."""


from .core import NotAttempted, _is_stub, register


def _gpipe_idle(n_micro, stage, backward):
    """Idle slots of ``stage`` between the step's first and last slot, and the step's length."""
    from ..figures import gpipe_slots  # matplotlib is needed only by this exercise

    slots = gpipe_slots(n_micro, 2, backward)
    length = max(slot for _, slot, _, _ in slots) + 1
    return length - sum(1 for s, *_ in slots if s == stage), length


@register("02.1", "GPipe, 2 stages, 4 micro-batches, forwards and backwards: how many time slots "
                  "does stage 0 sit idle between the step's first and last slot? Give an int.")
def _judge_idle_slots(answer):
    if not isinstance(answer, int) or isinstance(answer, bool):
        return f"give a number of slots as an int, not {type(answer).__name__}"
    idle, length = _gpipe_idle(4, 0, backward=True)
    if answer == idle:
        return None
    if answer == 2 * idle:
        return f"{answer} counts both stages together; the question asks about stage 0 alone"
    if answer == _gpipe_idle(4, 0, backward=False)[0]:
        return f"{answer} is the forwards-only answer; with backwards the pipe fills and drains twice"
    return (f"{answer} is not it: the step lasts {length} slots; count the blank slots in "
            "stage 0's row of draw_timeline(\"gpipe\", 2, 4)")


@register("02.2", "Write bubble_fraction(m): the share of the slots of a two-stage GPipe step "
                  "(forwards only, m micro-batches) in which a stage sits idle.")
def _judge_bubble_fraction(bubble_fraction):
    if not callable(bubble_fraction):
        return "the answer should be a function m -> a number between 0 and 1"
    for m in range(1, 17):
        got = bubble_fraction(m)
        if _is_stub(got):
            raise NotAttempted
        idle, length = _gpipe_idle(m, 0, backward=False)
        if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - idle / length) > 1e-9:
            return (f"for m={m} you return {got!r}, but each stage is idle {idle} of the step's "
                    f"{length} slots")
    return None


_SENT = ("hidden", "input_ids", "attention_mask")


@register("02.3", "The first stage sends hidden, input_ids and attention_mask. Which one would the "
                  "last stage not need if it pooled from the attention mask (rightmost_attended)?")
def _judge_unneeded_tensor(name):
    if name not in _SENT:
        return f"{name!r} is not one of the tensors the first stage sends: {', '.join(_SENT)}"
    if name == "hidden":
        return "the last stage's layers start from the hidden states: without them there is nothing to run"
    if name == "attention_mask":
        return ("rightmost_attended reads the attention mask, and the last stage's layers need it "
                "too, to keep padding out of attention")
    return None
