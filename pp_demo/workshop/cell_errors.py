"""In a notebook, the errors a learner meets say what to do, in one line.

Three kinds reach an attendee often, and IPython shows each under frames of library code:

* the package's own ``BadInput`` (a bad argument): its message already says what is wrong and
  what is accepted, so the cell shows that line alone;
* a ``NameError`` after cells were run out of order or after a kernel restart (``check``,
  ``model``, ``SEED`` not defined): the line says to run the cells above first;
* ``MissingPackage`` (notebook 06 without ColossalAI): the line says how to install it, and a
  later cell whose name that cell would have defined says the same, not a bare ``NameError``.

Every other exception keeps its full traceback: a learner's own bug needs its frames.

How it is loaded: ``import pp_demo`` installs it in the running IPython kernel (the first cell
of every notebook imports pp_demo), and ``make lab`` starts its kernels with it already loaded
(``--ext``), so a cell run right after a kernel restart, before the import, is covered too.
"""

from typing import Any

from pp_demo.colossalai import MissingPackage
from pp_demo.errors import BadInput

__all__ = ["NAME_HINT", "one_line", "load_ipython_extension", "install"]

EXTENSION = __name__  # what `--ext` and `%load_ext` name
NAME_HINT = "run the cells above this one first (after a kernel restart: from the top)"
_HANDLED = (BadInput, NameError, MissingPackage)


def one_line(error: BaseException, missing: str | None = None) -> str:
    """The line a cell shows for ``error`` (one of the handled kinds). ``missing``: what an
    earlier cell's ``MissingPackage`` said, if one was raised in this kernel."""
    if isinstance(error, NameError) and not isinstance(error, MissingPackage):
        because = f"an earlier cell stopped: {missing}" if missing else NAME_HINT
        return f"NameError: {error}: {because}"
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def load_ipython_extension(shell: Any) -> None:
    """IPython's entry point (``%load_ext``, ``--ext``): show the handled errors as one line."""
    said: dict[str, str] = {}

    def handler(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
        if isinstance(value, MissingPackage):
            said["missing"] = str(value).splitlines()[0]
        if isinstance(value, NameError) and not _raised_by_the_cell(tb):  # a bug in code it called
            lines = list(shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset))
        else:
            lines = [one_line(value, said.get("missing"))]
        # IPython's run_code leaves showing it to the handler: the kernel sends it as the cell's error
        shell._showtraceback(etype, value, lines)
        return lines

    shell.set_custom_exc(_HANDLED, handler)


def _raised_by_the_cell(tb: Any) -> bool:
    """Whether the traceback ends in the cell's own code (IPython's ``run_code`` frame, then the
    cell's ``<module>``), not in a function the cell called."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return frames[-1:] == ["<module>"] and len(frames) <= 2


def install() -> None:
    """Load the extension into the IPython kernel this runs in, once; nothing outside one."""
    import sys

    if "IPython" not in sys.modules:  # a script, a test, the command line: IPython never loaded
        return
    shell = sys.modules["IPython"].get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":  # a kernel's shell only
        return
    if getattr(shell, "custom_exceptions", ()) != _HANDLED:
        load_ipython_extension(shell)
