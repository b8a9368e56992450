"""Source code as a projector shows it: a function's lines, none wider than a notebook's 88 columns.

The package is written 120 columns wide; a cell's output in JupyterLab, beside its file browser,
wraps at 88, in the middle of a word. So a listing breaks a long line the way a formatter would: a
docstring or a comment is wrapped again at its words, code is broken inside its first bracket, then
at its commas. The listing is the same code as the source: it parses to the same tree, docstrings
compared word by word (``tests/figures/test_listing.py``).
"""

import inspect
import re
import textwrap

__all__ = ["WIDTH", "listing"]

WIDTH = 88
"""The widest line a notebook stores (``tests/repo/test_notebooks_hygiene.py`` holds every output to it)."""

_BLOCK = re.compile(r'^( *)(""".*?"""|(?:#[^\n]*\n\1)*#[^\n]*)$', re.M | re.S)


def listing(obj: object, width: int = WIDTH) -> str:
    """The source of ``obj`` (a function, method or class), dedented, each line at most ``width``."""
    source = textwrap.dedent(inspect.getsource(obj))  # type: ignore[arg-type]
    source = _BLOCK.sub(lambda block: _rewrapped(block, width), source)
    return "\n".join(out for line in source.splitlines() for out in _fit(line, width))


def _rewrapped(block: re.Match[str], width: int) -> str:
    """A docstring or a run of comment lines, wrapped again at its words where a line is too wide."""
    indent, text = block[1], block[2]
    if max(len(indent + line) for line in text.splitlines()) <= width:
        return block[0]
    if text.startswith("#"):
        words = " ".join(line.strip().removeprefix("#").strip() for line in text.splitlines())
        return "\n".join(textwrap.wrap(words, width, initial_indent=indent + "# ", subsequent_indent=indent + "# "))
    paragraphs = [" ".join(p.split()) for p in text[3:-3].split("\n\n")]
    wrapped = [textwrap.fill(p, width - 3, initial_indent=indent, subsequent_indent=indent) for p in paragraphs]
    return indent + '"""' + "\n\n".join(wrapped).lstrip() + '"""'


def _fit(line: str, width: int, inside: bool = False) -> list[str]:
    """Code: the line, or broken inside its first bracket (then at its commas, inside one)."""
    if len(line) <= width or line.lstrip().startswith(("#", '"')):
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    opened = line.find("(")
    closed = _closing(line, opened) if opened >= 0 and not re.search("[\"']", line[:opened]) else -1
    if closed >= 0:
        inner = indent + "    " + line[opened + 1 : closed].strip()
        return [line[: opened + 1], *_fit(inner, width, inside=True), indent + line[closed:]]
    if inside and "," in line and not re.search("[\"'\\[{]", line):  # one argument a line
        return [indent + part.strip() + "," for part in line.split(",") if part.strip()]
    return [line]  # nothing to break: left as it is


def _closing(line: str, opened: int) -> int:
    """The index of the bracket that closes the one at ``opened`` (-1 if none, or inside a string)."""
    depth = 0
    for index in range(max(opened, 0), len(line)):
        if line[index] in "\"'":
            return -1  # a string may hold brackets: not broken
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0:
            return index
    return -1
