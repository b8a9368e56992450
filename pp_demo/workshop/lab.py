"""``make lab`` (``python -m pp_demo.workshop.lab [--checkout DIR] [JUPYTER ARGS]``): JupyterLab on the
workbook, wherever it runs.

Lab serves the whole checkout and opens at ``workspace/``, the attendee's working copy of
``notebooks/`` with every output cleared (``pp_demo.workshop.workspace``): no stored output answers
a "Predict" prompt before the cell is run, and the attendee's edits never meet a ``git pull``. It
sits beside ``notebooks/``, so the links to ``../docs/glossary.md`` and the other pages resolve
inside what Lab serves (a server rooted at the notebooks' folder answers them with 404).

Workshops run in containers and on GPU boxes as root, and on servers without a display.
JupyterLab refuses root unless told ``--allow-root``, and without a display it cannot open a
browser. So this adds ``--allow-root`` for uid 0 and ``--no-browser`` without a display,
picks a free port and a token, prints the URL to open, and then becomes JupyterLab itself
(same process id, so Ctrl-C and ``kill`` stop it). Its kernels start with the one-line errors of
``pp_demo.workshop.cell_errors`` loaded (a ``python3`` kernel spec of its own, found first on
``JUPYTER_PATH``), so a cell run right after a kernel restart already says which cells to run.

A port, address or token the user gives (``LAB_ARGS=--port=9999``) replaces the one picked here,
rather than being passed twice (which Jupyter refuses after the URL is printed); the URL printed
is the one the server answers on, and a port that is taken stops Jupyter rather than moving it.
Since the process becomes Jupyter, nothing could remove a temporary folder afterwards: the
kernel spec, and matplotlib's font cache (``MPLCONFIGDIR``, so no per-user cache another
program rewrote can put font warnings in a notebook), live in one folder of this environment's
own (``platform_checks.own_folder``), rewritten each time. Standard library only.
"""

import argparse
import json
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

from pp_demo.errors import BadInput
from pp_demo.output_paths import NOTEBOOKS  # the checkout's, from its root (`make lab`)
from pp_demo.workshop.cell_errors import EXTENSION
from pp_demo.workshop.doctor import free_port
from pp_demo.workshop.platform_checks import own_folder, private_mplconfig
from pp_demo.workshop.workspace import WORKSPACE, prepare_workspace

__all__ = ["OPEN_AT", "lab_command", "kernel_spec", "main"]

# Where Lab opens: the attendee's working copy, in the file browser (its default URL, so the browser
# Lab opens and `/` go there too). Windows, without `make`, gives Lab this flag itself (docs/install.md).
OPEN_AT = f"--LabApp.default_url=/lab/tree/{WORKSPACE.as_posix()}"


# The options of Jupyter's a user may give that this sets itself: each given once, the user's kept.
PORT, IP, TOKEN = ("--port", "--ServerApp.port"), ("--ip", "--ServerApp.ip"), ("--IdentityProvider.token",)
ANY_ADDRESS = ("0.0.0.0", "::", "*", "")  # every interface: this machine's own 127.0.0.1 among them


def kernel_spec(folder: Path) -> Path:
    """A ``python3`` kernel spec under ``folder`` (a ``JUPYTER_PATH`` entry): this Python's
    ipykernel with the one-line errors loaded at start. Returns the spec's file, written whole
    (a second ``make lab`` at once reads the old or the new one, never half of one)."""
    spec = folder / "kernels" / "python3" / "kernel.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", f"--ext={EXTENSION}"]
    part = spec.with_name(f"kernel.json.{os.getpid()}")
    part.write_text(json.dumps({"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python"}))
    os.replace(part, spec)
    return spec


def _given(extra: list[str], names: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """The value the user gave one of ``names`` (``--port=N`` or ``--port N``; the last one
    wins), and ``extra`` without it."""
    value, rest, i = None, [], 0
    while i < len(extra):
        flag, eq, text = extra[i].partition("=")
        if flag in names and eq:
            value = text
        elif flag in names and i + 1 < len(extra):
            value, i = extra[i + 1], i + 1
        elif flag in names:
            raise BadInput(f"{flag} needs a value: {flag}=VALUE")
        else:
            rest.append(extra[i])
        i += 1
    return value, rest


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise BadInput(f"--port is a port number from 1 to 65535, got {text!r}")
    return int(text)


def lab_command(
    extra: list[str], environ: Mapping[str, str] = os.environ, uid: int | None = None, root: Path = Path(".")
) -> tuple[list[str], list[str], str]:
    """``(command, notes, url)``: the jupyter lab command line, what it adds and why, the URL.
    ``root`` is the folder Lab serves (the checkout; the browser test gives a copy); Lab opens at
    its ``workspace/``."""
    uid = os.geteuid() if uid is None and hasattr(os, "geteuid") else uid
    port_given, extra = _given(extra, PORT)
    ip, extra = _given(extra, IP)
    token, extra = _given(extra, TOKEN)
    port = free_port() if port_given is None else _port(port_given)
    ip = "127.0.0.1" if ip is None else ip
    token = secrets.token_hex(16) if token is None else token
    # `-m jupyterlab`, not `-m jupyter lab`: the latter looks up a `jupyter-lab` script on PATH,
    # which may belong to another environment or be missing (an install without its scripts).
    command = [sys.executable, "-m", "jupyterlab", f"--port={port}", f"--ip={ip}"]
    if port_given is not None:  # the user's port or none: Jupyter would move to another, off the URL
        command.append("--ServerApp.port_retries=0")
    command += [f"--IdentityProvider.token={token}", OPEN_AT, *extra]
    notes = []
    if uid == 0:
        command.append("--allow-root")
        notes.append("running as root (uid 0): starting JupyterLab with --allow-root")
    graphical = sys.platform in ("darwin", "win32") or environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")
    if not graphical:  # no display to open a browser on: Linux (or WSL, BSD) without X11 or Wayland
        command.append("--no-browser")
        notes.append("no display found: not opening a browser; open the URL below in yours")
    if root.is_dir():
        command.append(str(root))
    opens = OPEN_AT.split("=", 1)[1]
    host = "127.0.0.1" if ip in ANY_ADDRESS else f"[{ip}]" if ":" in ip else ip
    query = f"?token={token}" if token else ""
    return command, notes, f"http://{host}:{port}{opens}{query}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pp_demo.workshop.lab", add_help=False, allow_abbrev=False)
    where = "the workbook's checkout, which Lab serves, opening at its workspace/ (default: .)"
    parser.add_argument("--checkout", type=Path, default=Path("."), help=where)
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if not (args.checkout / NOTEBOOKS).is_dir():
        said = f"--checkout {args.checkout} holds no {NOTEBOOKS.as_posix()}/ folder"
        print(f"{parser.prog}: error: {said}: run it in the workbook's checkout", file=sys.stderr)
        return 2
    try:
        command, notes, url = lab_command(extra, root=args.checkout)
    except BadInput as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    try:
        notes += prepare_workspace(args.checkout)
    except OSError as error:
        print(f"{parser.prog}: error: cannot write the working copy workspace/: {error}", file=sys.stderr)
        return 1
    try:
        kernels = own_folder("jupyter")
        kernel_spec(kernels)
    except OSError as error:
        print(f"{parser.prog}: error: cannot write the kernel spec: {error}", file=sys.stderr)
        return 1
    mplconfig = private_mplconfig()
    if mplconfig and "MPLCONFIGDIR" not in os.environ:
        os.environ["MPLCONFIGDIR"] = mplconfig
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(kernels), os.environ.get("JUPYTER_PATH")]))
    print(*notes, f"JupyterLab: {url}", sep="\n", flush=True)
    os.execv(command[0], command)
    return 0  # not reached: the process is JupyterLab now


if __name__ == "__main__":
    raise SystemExit(main())
