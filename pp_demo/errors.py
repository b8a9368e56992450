"""The exception types for pp_demo's own input errors, and for an optional package not installed.

Why one type: the command line turns exactly these into ``python -m pp_demo: error: ...`` and
exit 2 (a usage error), and lets every other exception keep its type, message and traceback: a
``ValueError`` raised inside a user's forward, or inside torch, is never mistaken for a
mistake in the command line. ``BadInput`` subclasses ``ValueError`` so that callers who catch
``ValueError`` keep working.

The two bounds the core checks live here too, so the core imports nothing else of the package
(the other bounds of the numbers a user types: ``pp_demo.bounds``).
"""

from typing import Any

MAX_SEED = 2**64 - 1


class BadInput(ValueError):
    """A value handed to pp_demo (an argument, a flag, a job, a path) that it cannot work with.

    The message is one line that names the value and what would be accepted.
    """


class MissingPackage(ImportError):
    """An optional package that one part of the workbook needs (ColossalAI, for notebook 06) is
    not installed. The message is one line that says how to install it; a notebook shows that
    line alone, and later cells that needed what it would have defined say it again
    (``pp_demo.workshop.cell_errors``)."""


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
