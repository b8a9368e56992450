"""pp_demo's own input error, and the two bounds the core checks (the other bounds of the numbers a
user types: ``pp_demo.bounds``). Standard library only.

Why one type: the command line turns exactly this into ``python -m pp_demo: error: ...`` and exit 2
(a usage error), and lets every other exception keep its type, message and traceback: a ``ValueError``
raised inside a user's forward, or inside torch, is never mistaken for a mistake in the command line.
"""

from typing import Any

MAX_SEED = 2**64 - 1


class BadInput(ValueError):  # a ValueError, so that callers who catch ValueError keep working
    """A value handed to pp_demo (an argument, a flag, a job, a path) that it cannot work with; the
    message is one line that names the value and what would be accepted."""


def seed_value(value: Any, name: str = "seed") -> int:
    """A seed: what ``torch.manual_seed`` takes, an integer in 0..2**64 - 1."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise BadInput(f"{name} is an integer from 0 to 2**64 - 1, got {value!r}")
    return value


def count_value(value: Any, name: str, least: int = 1, most: int | None = None) -> int:
    """A count (layers, stages, seeds, runs): an integer in ``least..most``."""
    top = "" if most is None else f" and at most {most}"
    if isinstance(value, bool) or not isinstance(value, int) or value < least or (most is not None and value > most):
        raise BadInput(f"{name} is an integer of at least {least}{top}, got {value!r}")
    return value
