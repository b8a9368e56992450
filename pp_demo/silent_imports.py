"""Imports that print nothing, whatever the machine they run on.

Some dependencies talk at import, and only on some machines: bitsandbytes 0.50.2 (imported by
ColossalAI's import chain) logs a failed kernel probe when the CPU has avx512_bf16; others
warn about missing CUDA add-ons, or print from C code. Strict nbval fails a notebook cell on
any stderr output, and a CLI user reads it as an error, so an import that may talk goes
through ``quiet()``: Python warnings filtered, ``logging`` disabled, ``sys.stderr`` (where
transformers 5's "Loading weights" progress bar draws, in a terminal and in a notebook alike) and
file descriptor 2 (where C code writes) pointed at the null device. Everything is restored afterwards, so later
warnings and log records show as usual. ``installed`` asks whether an optional package is there,
without importing it. Standard library only.
"""

import contextlib
import importlib
import importlib.util
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from types import ModuleType

__all__ = ["quiet", "import_quietly", "installed"]


@contextlib.contextmanager
def _fd2_to_null() -> Iterator[None]:
    """Point file descriptor 2 at the null device (C code writes there, not to sys.stderr)."""
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 (a windowed process): nothing can be printed there
        yield
        return
    with open(os.devnull, "w") as null:
        sys.stderr.flush()
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence warnings, ``logging``, ``sys.stderr`` and C-level stderr inside the block; restore
    them after."""
    level = logging.root.manager.disable
    with (
        warnings.catch_warnings(),
        _fd2_to_null(),
        open(os.devnull, "w") as null,
        contextlib.redirect_stderr(null),
    ):
        warnings.simplefilter("ignore")
        # A library's logger may log through a handler it made earlier (bound to the real
        # stderr) or through logging's last-resort handler: disabling logging stops both.
        logging.disable(logging.CRITICAL)
        try:
            yield
        finally:
            logging.disable(level)


def import_quietly(name: str) -> ModuleType:
    """``importlib.import_module(name)`` inside ``quiet()``; import errors still raise."""
    with quiet():
        return importlib.import_module(name)


def installed(name: str) -> bool:
    """Whether ``import name`` would find a package here, asked without importing it (nor installing
    it). A folder of that name with no package in it (a namespace, such as this checkout's
    tests/deepspeed on pytest's path) is no package."""
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None
