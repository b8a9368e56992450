"""Refusing an answer that calls a library's own implementation of what it should write.

An exercise that asks for a rule (a function) can be passed without the idea by calling
the package's rule, or transformers' mask builder. Patching module attributes would not
catch that: a name imported earlier in the notebook (``from pp_demo.core import ...``)
still points at the original function. So the judge runs under ``sys.setprofile`` and
notes every call whose *code object* belongs to a refused module, however the reader
reached it, in the judge's thread and in every thread started while it runs (an answer that
hands the work to a thread or a pool it makes). The answer still runs to the end (a profiler
cannot stop it cleanly); the verdict is then the refusal. A judge must not call them: its right
answer's test would fail.
"""

import importlib
import inspect
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from types import CodeType, FrameType
from typing import Any

__all__ = ["refused_code", "calls_watched"]


def _functions_of(module_name: str) -> Iterable[Callable[..., Any]]:
    """The functions and methods defined in ``module_name`` (not the ones it imports); a dotted
    name that is a function of a module (``pp_demo.core.count_minus_one``), that function alone."""
    parent, _, attribute = module_name.rpartition(".")
    try:
        function = getattr(importlib.import_module(parent), attribute, None) if parent else None
    except ImportError:
        function = None
    if inspect.isfunction(function):
        yield function
        return
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # e.g. transformers.masking_utils exists on 5.x only: nothing to refuse
        return
    for value in vars(module).values():
        if inspect.isfunction(value) and value.__module__ == module_name:
            yield value
        elif inspect.isclass(value) and value.__module__ == module_name:
            for attribute, member in vars(value).items():
                function = getattr(member, "__func__", member)  # staticmethod, classmethod
                # dunders (a dataclass's __init__, __eq__) are how any object is used, not the answer
                if inspect.isfunction(function) and not attribute.startswith("__"):
                    yield function


@cache
def refused_code(module_names: tuple[str, ...]) -> dict[CodeType, str]:
    """Each refused function's code object, with the dotted name a reader would recognise."""
    return {
        function.__code__: f"{function.__module__}.{function.__qualname__}"
        for name in module_names
        for function in _functions_of(name)
    }


@contextmanager
def calls_watched(refused: dict[CodeType, str]) -> Iterator[list[str]]:
    """Within the block, the dotted names of the refused functions called, in order (the
    list is filled as calls happen, so it is complete even when the block raises)."""
    called: list[str] = []

    def watch(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in refused:
            called.append(refused[frame.f_code])

    previous, previous_threads = sys.getprofile(), threading.getprofile()
    if refused:
        sys.setprofile(watch)
        threading.setprofile(watch)  # threads started from now on: the answer's own
    try:
        yield called
    finally:
        sys.setprofile(previous)
        threading.setprofile(previous_threads)
