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
Standard library only.
"""

import argparse
import json
import os
import secrets
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pp_demo.output_paths import NOTEBOOKS  # the checkout's, from its root (`make lab`)
from pp_demo.workshop.cell_errors import EXTENSION
from pp_demo.workshop.doctor import free_port
from pp_demo.workshop.workspace import WORKSPACE, prepare_workspace

__all__ = ["OPEN_AT", "lab_command", "kernel_spec", "main"]

# Where Lab opens: the attendee's working copy, in the file browser (its default URL, so the browser
# Lab opens and `/` go there too). Windows, without `make`, gives Lab this flag itself (docs/install.md).
OPEN_AT = f"--LabApp.default_url=/lab/tree/{WORKSPACE.as_posix()}"


def kernel_spec(folder: Path) -> Path:
    """A ``python3`` kernel spec under ``folder`` (a ``JUPYTER_PATH`` entry): this Python's
    ipykernel with the one-line errors loaded at start. Returns the spec's file."""
    spec = folder / "kernels" / "python3" / "kernel.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", f"--ext={EXTENSION}"]
    spec.write_text(json.dumps({"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python"}))
    return spec


def lab_command(
    extra: list[str], environ: Mapping[str, str] = os.environ, uid: int | None = None, root: Path = Path(".")
) -> tuple[list[str], list[str], str]:
    """``(command, notes, url)``: the jupyter lab command line, what it adds and why, the URL.
    ``root`` is the folder Lab serves (the checkout; the browser test gives a copy); Lab opens at
    its ``workspace/``."""
    uid = os.geteuid() if uid is None and hasattr(os, "geteuid") else uid
    port, token = free_port(), secrets.token_hex(16)
    # `-m jupyterlab`, not `-m jupyter lab`: the latter looks up a `jupyter-lab` script on PATH,
    # which may belong to another environment or be missing (an install without its scripts).
    command = [sys.executable, "-m", "jupyterlab", f"--port={port}", "--ip=127.0.0.1"]
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
    return command, notes, f"http://127.0.0.1:{port}{opens}?token={token}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pp_demo.workshop.lab", add_help=False, allow_abbrev=False)
    where = "the workbook's checkout, which Lab serves, opening at its workspace/ (default: .)"
    parser.add_argument("--checkout", type=Path, default=Path("."), help=where)
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if not (args.checkout / NOTEBOOKS).is_dir():
        said = f"--checkout {args.checkout} holds no {NOTEBOOKS.as_posix()}/ folder"
        print(f"{parser.prog}: error: {said}: run it in the workbook's checkout", file=sys.stderr)
        return 2
    command, notes, url = lab_command(extra, root=args.checkout)
    notes += prepare_workspace(args.checkout)
    kernels = Path(tempfile.mkdtemp(prefix="pp_demo_kernels_"))
    kernel_spec(kernels)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(kernels), os.environ.get("JUPYTER_PATH")]))
    print(*notes, f"JupyterLab: {url}", sep="\n", flush=True)
    os.execv(command[0], command)
    return 0  # not reached: the process is JupyterLab now


if __name__ == "__main__":
    raise SystemExit(main())
