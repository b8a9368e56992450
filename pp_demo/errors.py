"""pp_demo's own input error. Standard library only. (The bounds of the numbers a user types, each
checked in one sentence with this error: ``pp_demo.bounds``.)

Why one type: the command line turns exactly this into ``python -m pp_demo: error: ...`` and exit 2
(a usage error), and lets every other exception keep its type, message and traceback: a ``ValueError``
raised inside a user's forward, or inside torch, is never mistaken for a mistake in the command line.
"""


class BadInput(ValueError):  # a ValueError, so that callers who catch ValueError keep working
    """A value handed to pp_demo (an argument, a flag, a job, a path) that it cannot work with; the
    message is one line that names the value and what would be accepted."""
