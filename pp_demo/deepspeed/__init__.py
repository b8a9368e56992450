"""The bug and its check on DeepSpeed's pipeline engine (``deepspeed.pipe.PipelineModule``).

DeepSpeed ships no sequence-classification forward for its pipeline engine: whoever puts a
classifier on it writes the last stage's pooling, which is where this bug lives. Here the core's
own stages run as a ``PipelineModule`` on CPU ranks (gloo), with ``eval_batch`` and
``train_batch``, and a user's own ``PipelineModule`` is judged by the checker.

* ``layers``: the core's stages as the layers of a ``PipelineModule`` (thin wrappers, no forward rewritten);
* ``ranks``: start the ranks (a free port, a timeout, one line on a failure), torchrun's environment;
* ``on_rank``: what each rank runs, ``python -m pp_demo.deepspeed.on_rank``;
* ``reproduce``: the bug on the engine, rows against ``model.forward``, and training steps;
* ``check``: ``python -m pp_demo check MODULE:BUILDER --engine deepspeed``, a user's pipeline judged.

DeepSpeed is optional (``make deepspeed``; it does not install on native Windows), and only the
ranks import it. ``make deepspeed`` puts it beside the venv's packages, in ``.venv/deepspeed/``,
which only the ranks have on their path: wherever DeepSpeed is importable, transformers imports it
at every model import (about a second per process, and a warning on stderr). Installed the usual
way (``pip install deepspeed``) it is found too.
"""

import importlib.metadata
import os
import sys

from pp_demo.silent_imports import installed

__all__ = ["missing", "NOT_INSTALLED", "beside_venv", "installed_version"]

NOT_INSTALLED = "DeepSpeed is not installed (make deepspeed; Linux and macOS only)"


def beside_venv() -> str | None:
    """The folder ``make deepspeed`` installs DeepSpeed in, if it holds it: ``deepspeed/`` in the venv."""
    folder = os.path.join(sys.prefix, "deepspeed")
    return folder if os.path.isfile(os.path.join(folder, "deepspeed", "__init__.py")) else None


def missing() -> str | None:
    """``NOT_INSTALLED`` when DeepSpeed is nowhere the ranks can import it, else None (nothing is imported)."""
    found = beside_venv() is not None or installed("deepspeed")
    return None if found else NOT_INSTALLED


def installed_version() -> str | None:
    """DeepSpeed's version where it is installed, beside the venv or the usual way; None without metadata."""
    folder = beside_venv()
    found = importlib.metadata.distributions(name="deepspeed", path=[folder]) if folder else ()
    for distribution in found:
        return str(distribution.version)
    try:
        return importlib.metadata.version("deepspeed")
    except importlib.metadata.PackageNotFoundError:
        return None
