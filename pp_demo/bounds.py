"""The bounds of the numbers a user types, one sentence per bound, standard library only: the one
home of every bound, the core's (a seed, the counts of a model) included.

Each takes the value and the name the user knows it by (``--timeout``, ``timeout_s``) and returns
the value in range, else raises ``BadInput`` naming the value, the bound and what to give instead:
the command line and the Python API call the same function, so both refuse in the same sentence.

Why these bounds: a timeout of ``inf`` (or anything past what the platform's clock holds) makes
``threading``'s wait raise ``OverflowError`` inside C and aborts the interpreter; a day is longer
than any check or run of the workbook and far inside every platform's range.
"""

import math
from typing import Any

from pp_demo.errors import BadInput

__all__ = ["MAX_SEED", "MAX_TIMEOUT_S", "MAX_LENGTH", "MAX_BATCH_SIZE", "MAX_MICRO_BATCHES"]
__all__ += ["seed_value", "count_value", "seconds", "tolerance_value", "strings"]

MAX_SEED = 2**64 - 1  # what torch.manual_seed takes
MAX_TIMEOUT_S = 86400.0  # a day
# The checker's battery (``check --lengths``, ``--batch-sizes``, ``--micro-batches``, and
# ``check_forward``'s): far past what a padding pattern needs, while a length or a size of 10**20,
# which ``int`` takes, is a battery that never finishes.
MAX_LENGTH = 4096
MAX_BATCH_SIZE = 1024
MAX_MICRO_BATCHES = 1024


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


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


def seconds(value: Any, name: str, zero: bool = False) -> float:
    """A timeout: a finite number of seconds, more than 0 and at most a day; with ``zero``, 0 too
    (a wait that may be skipped: ``bench --wait 0`` starts at once)."""
    least_ok = _is_number(value) and (value >= 0 if zero else value > 0)
    if not least_ok or math.isnan(value) or value > MAX_TIMEOUT_S:
        least = "0 or more" if zero else "more than 0"
        raise BadInput(f"{name} is a number of seconds {least} and at most {MAX_TIMEOUT_S:g} (a day), got {value!r}")
    return float(value)


def tolerance_value(value: Any, name: str) -> float:
    """A tolerance on logits: a finite number more than 0 (how wide it may be depends on the
    logits: ``pp_demo.verify.tolerances.check_separates``)."""
    if not _is_number(value) or not math.isfinite(value) or value <= 0:
        raise BadInput(f"{name} is a finite number more than 0 (a largest |logit difference|), got {value!r}")
    return float(value)


def strings(value: Any, name: str, example: str) -> list[str]:
    """A list of names, refused as such when one bare string is given (it would be read letter
    by letter): ``example`` shows the list form."""
    if isinstance(value, str | bytes):
        raise BadInput(f"{name} takes a list of names, got the string {value!r}: give {example}")
    try:
        names = list(value)
    except TypeError:
        raise BadInput(f"{name} takes a list of names, got {type(value).__name__}: give {example}") from None
    if not all(isinstance(n, str) for n in names):
        raise BadInput(f"{name} takes a list of names (strings), got {names!r}: give {example}")
    return names
