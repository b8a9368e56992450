"""Run the user's callable so that nothing it does can end or hang the checker.

The callable runs in a daemon thread the checker waits on for at most ``timeout_s``. A thread,
not ``SIGALRM``: signals only reach the main thread and do not exist on every platform, and a
hung forward (a pipeline waiting for a dead peer) is simply abandoned, dying with the process;
the checker runs no batch after it (a forward that hung once would likely hang on every batch,
one timeout each).
Whatever leaves the callable, ``SystemExit`` included, becomes one line naming the exception
and where it was raised; what it returns must be logits: a tensor of the reference's shape,
with values (not on the meta device), on the reference's device.
"""

import inspect
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = ["Outcome", "call_in_worker", "describe_exception", "as_logits"]


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    failure: str | None = None  # one line: what went wrong, None when the callable returned
    timed_out: bool = False  # abandoned after the timeout: it may still hold the model, a lock, a peer


def describe_exception(error: BaseException, callable_: Callable[..., Any] | None = None) -> str:
    """``TYPE: message (file:line)`` at the innermost frame outside this module (the callable's
    own line when the call failed before entering it, e.g. a wrong signature); a
    ``SyntaxError`` at the line it names (it is raised where the code was compiled)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != __file__]
    code = getattr(callable_, "__code__", None)
    if isinstance(error, SyntaxError):
        where, message = f"{Path(error.filename or '?').name}:{error.lineno}", str(error.msg)
    elif frames:
        where, message = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}", str(error)
    else:
        where, message = f"{Path(code.co_filename).name}:{code.co_firstlineno}" if code else "?", str(error)
    text = f"{type(error).__name__}: {_first_line(message, 200)}".rstrip(": ") + f" ({where})"
    cause = error.__cause__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    if cause is not None:  # a framework that wraps the real error (the tracer does)
        text += f", caused by {type(cause).__name__}: {_first_line(str(cause), 120)}".rstrip(": ")
    return text


def _first_line(text: str, limit: int) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def call_in_worker(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float | None
) -> Outcome:
    """In a daemon thread under ``torch.no_grad`` (a check needs no graph)."""
    box: dict[str, Outcome] = {}

    def work() -> None:
        try:
            with torch.no_grad():
                box["out"] = Outcome(value=function(*args, **kwargs))
        except BaseException as error:  # SystemExit and KeyboardInterrupt too: never the checker's end
            box["out"] = Outcome(failure=f"raised {describe_exception(error, function)}")

    worker = threading.Thread(target=work, name="pp_demo-check-callable", daemon=True)
    worker.start()
    worker.join(timeout_s)  # Ctrl-C reaches the main thread here
    if worker.is_alive():
        return Outcome(failure=f"did not return within {timeout_s:g} s (--timeout); abandoned", timed_out=True)
    return box["out"]


def as_logits(value: Any, shape: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor | None, str | None]:
    """The returned value as float logits of ``shape``, or what is wrong with it (one line)."""
    if inspect.iscoroutine(value):
        value.close()  # never awaited: closed here, so Python does not warn about it later
        return None, "returned a coroutine (an async def forward): give a plain def that returns the logits"
    if hasattr(value, "logits") and not isinstance(value, torch.Tensor):
        return None, f"returned a {type(value).__name__}, not logits (return its .logits)"
    if isinstance(value, list | tuple):
        return None, f"returned a {type(value).__name__}, not a tensor of logits"
    if value is None:
        return None, "returned None, not logits"
    if not isinstance(value, torch.Tensor):
        kind = f"{type(value).__module__}.{type(value).__name__}".removeprefix("builtins.")
        return None, f"returned a {kind}, not a torch.Tensor of logits"
    if value.is_meta:
        return None, "returned logits on the meta device (shapes only, no values)"
    if not value.dtype.is_floating_point:
        return None, f"returned a tensor of dtype {value.dtype}, not floating-point logits"
    if tuple(value.shape) != shape:
        return None, f"returned logits of shape {tuple(value.shape)}; model.forward returns {shape}"
    return value.detach().to(device), None
