"""What a run is given, checked in one line each before any rank starts (a batch's tensors are
checked at the core's door, ``pp_demo.core.check_batch``).

Unchecked, each of these fails far from its cause: a device this torch cannot compute on, a
timeout of 0 as "did not finish within 0 s", a fault that never fires, a script without the main
guard as a cascade of "bootstrapping phase" errors from every rank. Each function raises
``BadInput`` with the value and what would do.
"""

import ast
import math
import multiprocessing
import os
import sys
from collections.abc import Iterable
from typing import Any

import torch

from pp_demo.errors import BadInput

__all__ = ["check_device", "check_fault", "check_run_arguments"]
__all__ += ["check_main_guard"]


def _device_count(kind: str) -> int:
    """How many devices of ``kind`` this torch build can compute on here (0: none)."""
    if kind == "mps":
        return 1 if torch.backends.mps.is_available() else 0
    module = getattr(torch, kind, None)
    available = getattr(module, "is_available", None)
    if module is None or available is None or not available():
        return 0
    return int(getattr(module, "device_count", lambda: 1)())


def check_device(text: str) -> str:
    """``text`` when it names a device this torch can compute on, else a one-line refusal
    (every device type torch parses: cpu, cuda, mps, xpu, meta, hpu, xla, ...)."""
    usable = " or ".join(["cpu"] + [kind for kind in ("cuda", "xpu", "mps") if _device_count(kind)])
    try:
        device = torch.device(text)
    except (RuntimeError, TypeError):
        raise BadInput(f"{text!r} is not a device: use {usable}") from None
    if device.type == "cpu":
        return text
    if device.type == "meta":
        raise BadInput(f"{text!r} holds shapes without values: logits cannot be compared there; use {usable}")
    count = _device_count(device.type)
    if count == 0:
        seen = "sees no CUDA device" if device.type == "cuda" else f"cannot compute on {device.type!r} here"
        raise BadInput(f"{text!r}: this torch ({torch.__version__}) {seen}; use {usable}")
    if device.index is not None and device.index >= count:
        raise BadInput(f"{text!r}: this machine has {count} {device.type} device(s), {device.type}:0..{count - 1}")
    return text


def check_fault(fault: Any, n_stages: int, forwards: int) -> None:
    """A fault on a stage the pipeline has, of a known kind, at a forward the rank runs."""
    if fault.rank not in range(n_stages) or fault.how not in ("raise", "kill", "hang"):
        raise BadInput(f"a fault needs a rank in 0..{n_stages - 1} and how 'raise', 'kill' or 'hang', got {fault}")
    if isinstance(fault.at, bool) or not isinstance(fault.at, int) or fault.at not in range(forwards):
        raise BadInput(
            f"{fault} would never fire: rank {fault.rank} runs {forwards} micro-batch forward(s), "
            f"at 0..{forwards - 1} (give a smaller at, or more micro-batches)"
        )


def check_run_arguments(jobs: Any, on: str, timeout_s: Any, kinds: tuple[type, ...]) -> list[Any]:
    """``run``'s arguments: a list of jobs of ``kinds`` (``Job``, ``RankJob``; not one job), a
    known place, a timeout > 0; a fault only where there are ranks to inject it into."""
    if isinstance(jobs, kinds):
        raise BadInput(f"run takes a list of jobs, got one {type(jobs).__name__}: run([job])")
    if not isinstance(jobs, Iterable) or isinstance(jobs, (str, bytes)):
        raise BadInput(f"run takes a list of jobs, got {type(jobs).__name__}")
    checked: list[Any] = list(jobs)
    for job in checked:
        if not isinstance(job, kinds):
            raise BadInput(f"run takes Job objects (Job.infer, Job.step, Job.train), got a {type(job).__name__}")
    if on not in ("process", "ranks"):
        raise BadInput(f"run(on=...) is 'process' or 'ranks', got {on!r}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < math.inf:
        raise BadInput(f"timeout_s is a number of seconds > 0, got {timeout_s!r}")
    if on == "process" and any(getattr(job, "fault", None) is not None for job in checked):
        raise BadInput("a Fault is injected into a rank, and on='process' has none: run the job with on='ranks'")
    return checked


def check_main_guard() -> None:
    """Refuse to start ranks from a script's top level outside ``if __name__ == "__main__":``.

    Each rank imports the script it was started from again (that is how a function of it can
    run there); without the guard every rank would reach this call and start ranks itself."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if main is None or path is None or getattr(multiprocessing.current_process(), "_inheriting", False):
        return
    if name == "__main__" or name.endswith(".__main__") or os.path.basename(path).startswith("ipython"):
        return  # a package's __main__.py (python -m pkg) is not run again in the ranks: no guard needed
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return  # called from a function the script's top level did not call (a thread, a callback)
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return
    # unparsed, the test reads the same however the script spaces or quotes it
    tests = ("__name__ == '__main__'", "'__main__' == __name__")
    guards = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) in tests]
    if not any(guard.lineno <= frame.f_lineno <= (guard.end_lineno or 0) for guard in guards):
        raise BadInput(
            f'line {frame.f_lineno} of {os.path.basename(path)} starts ranks outside `if __name__ == "__main__":`; '
            "every rank imports the script again, so put the call under that guard"
        )
