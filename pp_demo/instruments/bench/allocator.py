"""One malloc setting for every process the benchmark times, so page faults do not pick the winner.

glibc's malloc serves a block of 128 KiB or more from a fresh ``mmap`` and moves that threshold as
blocks are freed. A process that allocates and frees multi-MiB activations every micro-batch then
takes thousands of minor page faults per forward (the kernel zeroes every new page), a number that
varies by run and by process: one process and one rank of the same work differ by whatever regime
each fell into (``tools/page_faults.py`` counts them; docs/results.md gives its numbers). Fixed
thresholds keep freed memory for the next micro-batch.

``fix_malloc_thresholds`` runs first in every process the benchmark times (one-process baselines,
the capacity pair, pp_demo's and ColossalAI's ranks); without glibc (macOS, musl) it does nothing.
"""

import ctypes
import sys
from typing import Any

__all__ = ["MALLOC_THRESHOLDS", "fix_malloc_thresholds", "malloc_thresholds_settable"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
# mmap only above 32 MiB (glibc's largest threshold on 64 bits: every activation here is smaller),
# and keep up to 1 GiB of freed heap instead of returning it to the kernel
MALLOC_THRESHOLDS = {"mmap_threshold": 32 * 2**20, "trim_threshold": 2**30}


def _mallopt() -> Any:
    """glibc's ``mallopt``, or None where there is none (not Linux, or a libc without it: musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def malloc_thresholds_settable() -> bool:
    """Whether this platform has the thresholds to fix, asked without setting them (the results record it)."""
    return _mallopt() is not None


def fix_malloc_thresholds() -> bool:
    """Set this process's malloc thresholds; True where glibc took both, False where there is none."""
    mallopt = _mallopt()
    if mallopt is None:
        return False
    mmap_ok = mallopt(_M_MMAP_THRESHOLD, MALLOC_THRESHOLDS["mmap_threshold"])
    trim_ok = mallopt(_M_TRIM_THRESHOLD, MALLOC_THRESHOLDS["trim_threshold"])
    return bool(mmap_ok and trim_ok)
