"""Exercises of notebook 10 · schedules (checked by ``pp_demo.exercises.check``)."""

from collections.abc import Callable

from pp_demo.ranks.schedules import gpipe_slots

from .core import NotAttempted, answered, plain_int, plain_number, register, same_number, wrong_answer


def _gpipe_idle(n_micro: int, stage: int, backward: bool) -> tuple[int, int]:
    """Idle slots of ``stage`` between the step's first and last slot, and the step's length."""
    slots = gpipe_slots(n_micro, 2, backward)
    length = max(slot for _, slot, _, _ in slots) + 1
    return length - sum(1 for s, *_ in slots if s == stage), length


@register(
    "10.1",
    "GPipe, 2 stages, 4 micro-batches, forwards and backwards: how many time slots "
    "does stage 0 (the row labelled rank 0) sit idle between the step's first and last slot? Give an int.",
    solution=2,
    why="10 slots (m + 1 forward, m + 1 backward), 8 of them busy: one idle slot each way",
    wrong=(
        wrong_answer(4, "adds up both stages' idle slots"),
        wrong_answer(1, "counts a forward-only step: with backwards the pipe fills and drains twice"),
    ),
)
def _judge_idle_slots(given: object) -> str | None:
    answer = plain_int(given, "a number of slots as an int")
    if isinstance(answer, str):
        return answer
    idle, length = _gpipe_idle(4, 0, backward=True)
    if answer == idle:
        return None
    where = "stage 0's row of the GPipe timeline of the question (forwards and backwards)"
    if answer == 2 * idle:
        return f"{answer} counts both stages together; count the blank slots in {where} alone"
    if answer == _gpipe_idle(4, 0, backward=False)[0]:
        return f"{answer} is the forwards-only answer; with backwards the pipe fills and drains twice: count {where}"
    return f"{answer} is not it: the step lasts {length} slots; count the blank slots in {where}"


def _is_one_argument_stub(function: Callable[..., object]) -> bool:
    """The empty stub of the two-stage draft of 10.2, ``bubble_fraction(m)``: not attempted."""
    try:
        return function(1) is ...
    except Exception:  # any failure means it is not that stub
        return False


@register(
    "10.2",
    "Write bubble_fraction(m, p): the share of the slots of a GPipe step on p stages "
    "(forwards only, m micro-batches) in which a stage sits idle.",
    # the timeline functions and the benchmark's ideal speedup hold the answer already
    refuse=("pp_demo.ranks.schedules", "pp_demo.instruments.bench.bounds"),
    solution=lambda m, p: (p - 1) / (m + p - 1),
    why="p - 1 idle slots in a step of m + p - 1",
    wrong=(
        wrong_answer(
            lambda m, p: p / (m + p - 1),
            "counts p idle slots per stage; each stage waits p - 1 slots in all (fill plus drain)",
            shown="`p / (m + p - 1)`",
        ),
        wrong_answer(
            lambda m, p: (p - 1) / m,
            "divides by the busy slots instead of the whole step of m + p - 1 slots",
            shown="`(p - 1) / m`",
        ),
    ),
)
def _judge_bubble_fraction(bubble_fraction: object) -> str | None:
    # the step lasts m + p - 1 slots: the last micro-batch enters stage p - 1 at slot m - 1 + p - 1
    if not callable(bubble_fraction):
        return "the answer should be a function (m, p) -> a number between 0 and 1"
    for p in range(2, 6):
        for m in range(1, 17):
            try:
                got = answered(bubble_fraction(m, p))
            except TypeError:
                if _is_one_argument_stub(bubble_fraction):
                    raise NotAttempted from None
                return "write bubble_fraction(m, p): it takes the number of micro-batches and of stages"
            idle, length = p - 1, m + p - 1
            value = plain_number(got, "the share as a number, e.g. 0.5")
            if isinstance(value, str):  # the type is wrong, whatever the arithmetic
                return f"for m={m}, p={p}: {value}"
            if not same_number(got, value, idle / length):
                return (
                    f"for m={m}, p={p} you return {got!r}: draw that step (forwards only) and count the slots a "
                    "stage sits idle, and all the slots of the step"
                )
    return None
