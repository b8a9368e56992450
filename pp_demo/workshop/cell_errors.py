"""In a notebook, the errors a learner meets say what to do, in one line, or point at their line.

Four kinds reach an attendee often, and IPython shows each under frames of library code:

* the package's own ``BadInput`` (a bad argument): its message already says what is wrong and
  what is accepted, so the cell shows that message alone (every line of it); raised inside the
  learner's own functions, it keeps their frames (not the library's), so they see which call;
* a ``NameError`` after cells were run out of order or after a kernel restart (``check``,
  ``model``, ``SEED`` not defined): a name that a code cell of the notebook defines
  (``pp_demo.workshop.notebook_names``), so the line says to run the cells above first, or,
  after a ``MissingPackage``, that an earlier cell stopped and why (notebook 06 without
  ColossalAI: ``FORWARDS``, even when used inside a function a cell defined);
* a typo (``modle2``, ``pritn``): a name no cell defines. Telling the learner to run the cells
  above would send them the wrong way: they see the failing line, and the name it was close to;
* ``MissingPackage`` (notebook 06 without ColossalAI): the line says how to install it.

Every other exception keeps its full traceback: a learner's own bug needs its frames. So does a
``NameError`` the learner raises themselves (``raise NameError("...")``: no name was looked up),
and one raised inside library code.

How it is loaded: ``import pp_demo`` installs it in the running IPython kernel (the first cell
of every notebook imports pp_demo), and ``make lab`` starts its kernels with it already loaded
(``--ext``), so a cell run right after a kernel restart, before the import, is covered too.
"""

import builtins
import difflib
import types
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
    message = str(error).strip()
    if not message:  # raised with nothing to say: at least what was refused, and that no reason came
        return f"{type(error).__name__}: (raised with an empty message: no reason was given)"
    return f"{type(error).__name__}: {message}"


def close_match(name: str, namespaces: "list[dict[str, Any]]") -> str | None:
    """The defined name ``name`` is most likely a typo of (difflib, as Python's own suggestion
    does), among the namespaces' names and the builtins; None when none is close."""
    candidates = {key for space in namespaces for key in space if not key.startswith("_")} | set(dir(builtins))
    candidates.discard(name)
    found = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def load_ipython_extension(shell: Any) -> None:
    """IPython's entry point (``%load_ext``, ``--ext``): show the handled errors as one line."""
    said: dict[str, str] = {}

    def handler(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
        if isinstance(value, MissingPackage):
            said["missing"] = str(value).splitlines()[0]
        lines = _lines(shell, value, tb, tb_offset, said.get("missing"))
        # IPython's run_code leaves showing it to the handler: the kernel sends it as the cell's error
        shell._showtraceback(etype, value, lines)
        return lines

    shell.set_custom_exc(_HANDLED, handler)


def _lines(shell: Any, value: BaseException, tb: Any, tb_offset: Any, missing: str | None) -> list[str]:
    """What the cell shows for a handled error (the module's docstring)."""
    cells = _cell_files(shell)
    frames = _frames(tb)
    if isinstance(value, MissingPackage):
        return [one_line(value)]
    if isinstance(value, BadInput):
        # the learner's own functions on the way (past the cell's top level): theirs to see
        if any(frame.tb_frame.f_code.co_filename in cells for frame in frames[2:]):
            return _traceback(shell, value, _only(frames, cells), 0, one_line(value))
        return [one_line(value)]
    name = getattr(value, "name", None)
    in_cells = bool(frames) and frames[-1].tb_frame.f_code.co_filename in cells
    if name is None or not in_cells:  # raised by hand, or inside library code: a bug, with its frames
        return _traceback(shell, value, tb, tb_offset)
    from pp_demo.workshop.notebook_names import defined_by_notebooks

    defined = defined_by_notebooks(shell.user_ns.get("__session__"))
    frame = frames[-1].tb_frame
    suggestion = close_match(name, [frame.f_locals, frame.f_globals, shell.user_ns])
    if (defined is not None and name in defined) or (defined is None and suggestion is None):
        return [one_line(value, missing)]
    if suggestion is None:  # no cell defines it, nothing is close: Python's own traceback
        return _traceback(shell, value, tb, tb_offset)
    last = f"NameError: {value}: a typo? did you mean {suggestion!r}? (no cell of this notebook defines {name!r})"
    return _traceback(shell, value, _only(frames, cells), 0, last)


def _frames(tb: Any) -> list[Any]:
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    return frames


def _cell_files(shell: Any) -> set[str]:
    """The file names IPython gave the cells it ran (their code's ``co_filename``)."""
    return set(getattr(getattr(shell, "compile", None), "_filename_map", {}) or {})


def _only(frames: list[Any], files: set[str]) -> Any:
    """A traceback of the frames whose code is in ``files`` alone (the learner's), in order."""
    kept = [frame for frame in frames if frame.tb_frame.f_code.co_filename in files]
    tb = None
    for frame in reversed(kept):
        tb = types.TracebackType(tb, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return tb


def _traceback(shell: Any, value: BaseException, tb: Any, tb_offset: Any, last: str | None = None) -> list[str]:
    """IPython's own traceback of ``tb``; its last line (the exception's) replaced by ``last``."""
    lines = list(shell.InteractiveTB.structured_traceback(type(value), value, tb, tb_offset=tb_offset))
    if last is not None and lines:
        lines[-1] = last
    return lines


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
