"""The exception types for pp_demo's own input errors, and for an optional package not installed.

Why one type: the command line turns exactly these into ``python -m pp_demo: error: ...`` and
exit 2 (a usage error), and lets every other exception keep its type, message and traceback: a
``ValueError`` raised inside a user's forward, or inside torch, is never mistaken for a
mistake in the command line. ``BadInput`` subclasses ``ValueError`` so that callers who catch
``ValueError`` keep working.
"""


class BadInput(ValueError):
    """A value handed to pp_demo (an argument, a flag, a job, a path) that it cannot work with.

    The message is one line that names the value and what would be accepted.
    """


class MissingPackage(ImportError):
    """An optional package that one part of the workbook needs (ColossalAI, for notebook 06) is
    not installed. The message is one line that says how to install it; a notebook shows that
    line alone, and later cells that needed what it would have defined say it again
    (``pp_demo.workshop.cell_errors``)."""
