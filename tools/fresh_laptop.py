"""`make test-fresh-laptop`: `make reproduce` (the attendee's `make setup`, then the main job) as a new laptop runs it.

    python tools/fresh_laptop.py [--installer pip] [--dev] [--time]

1. A fresh clone of this checkout's HEAD, in a temporary folder, with empty download caches.
2. Every make and pip there runs with pip's configuration switched off (``PIP_CONFIG_FILE`` is
   the null device, no ``PIP_*`` variable): pip and uv see the public index only.
3. No torch source at all (PyTorch's index stood in for by an address that never answers):
   `make setup` must fail within 60 s, with one line that names the fix.
4. A stand-in for PyTorch's CPU index on 127.0.0.1: a simple index holding the one torch wheel
   of this machine's pip find-links folder (read from `pip config list` now, never written down;
   where there is none, as on a CI runner, the wheel is fetched from ``--download-from``).
   With it as ``TORCH_INDEX``, `make reproduce` must pass and install the CPU build.
5. ``--dev``: then `make setup-dev` (what a contributor adds); ``--time``: each step's wall time
   and download size, for the figures in docs/install.md.

It installs the whole lock from the public index: .ci/run runs it, `make test` does not.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_SOURCE_LIMIT_S = 60
MAKE_ERROR = re.compile(r"make(\[\d+\])?: \*\*\*")  # make's own "Error 1" line, at any depth


@contextlib.contextmanager
def silent_index() -> Iterator[str]:
    """An index on 127.0.0.1 that takes the connection and never answers: a request to it neither
    gets a reply nor is refused, as an unreachable index (no traffic leaves this machine)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)  # connections wait in the backlog; nothing ever reads them
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/whl"
    finally:
        server.close()


def fail(message: str) -> None:
    raise SystemExit(f"fresh laptop: FAIL: {message}")


def torch_wheel(download_from: str, folder: Path) -> Path:
    """The torch CPU wheel in the find-links folder this machine's pip is configured with; where
    there is none (a CI runner), downloaded from the index ``download_from`` into ``folder``."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    folders = [f for m in re.finditer(r"find-links='([^']*)'", listed) for f in m.group(1).split()]
    for found in folders:
        wheels = sorted(Path(found.removeprefix("file://")).glob("torch-*+cpu-*.whl"))
        if wheels:
            return wheels[-1]
    if download_from:
        version = re.search(r"^torch==(\S+)", (ROOT / "constraints" / "pinned.lock.txt").read_text(), re.M)
        pinned = f"torch=={version.group(1) if version else ''}+cpu"
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--index-url", download_from]
        subprocess.run([*command, pinned, "-d", str(folder)], check=True)
        return next(folder.glob("torch-*.whl"))
    fail("no torch CPU wheel: this machine's pip has no find-links folder with one, and no TORCH_INDEX was given")
    raise AssertionError  # fail() does not return


def serve_index(wheel: Path, root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A PEP 503 simple index for torch alone, served from ``root`` on 127.0.0.1."""
    project = root / "simple" / "torch"
    project.mkdir(parents=True)
    (project / wheel.name).symlink_to(wheel)
    link = wheel.name.replace("+", "%2B")
    (project / "index.html").write_text(f'<html><body><a href="{link}">{wheel.name}</a></body></html>\n')
    (root / "simple" / "index.html").write_text('<html><body><a href="torch/">torch</a></body></html>\n')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # the base class's name for it
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple"


def laptop_env(home: Path) -> dict[str, str]:
    """This environment without any pip or uv configuration, and with empty caches under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "PYTHONPATH"))}
    return dict(env, PIP_CONFIG_FILE=os.devnull, XDG_CACHE_HOME=str(home / "cache"), UV_NO_CONFIG="1")


def megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def make(clone: Path, env: dict[str, str], *words: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *words], cwd=clone, env=env, capture_output=True, text=True, timeout=timeout
    )


def check_no_source(clone: Path, env: dict[str, str], installer: str) -> None:
    start = time.monotonic()
    try:
        with silent_index() as index:
            done = make(clone, env, "setup", f"INSTALLER={installer}", f"PYTORCH_WHEELS={index}", timeout=120)
    except subprocess.TimeoutExpired:
        fail("`make setup` with no torch source did not stop within 120 s")
    took = time.monotonic() - start
    lines = [ln for ln in done.stderr.splitlines() if not MAKE_ERROR.match(ln)]
    if done.returncode == 0 or took > NO_SOURCE_LIMIT_S:
        fail(f"`make setup` with no torch source: exit {done.returncode}, not a failure within {NO_SOURCE_LIMIT_S} s")
    if len(lines) != 1 or not all(word in lines[0] for word in ("TORCH_INDEX", "TORCH_FIND_LINKS", "TORCH=cu128")):
        fail(f"`make setup` with no torch source said {lines!r}, not one line naming the fix")
    print(f"ok   no torch source: `make setup` fails in one line: {lines[0][:100]}...")


def step(clone: Path, env: dict[str, str], label: str, words: list[str], show_time: bool, home: Path) -> None:
    start, before = time.monotonic(), megabytes(home / "cache")
    done = make(clone, env, *words)
    if done.returncode != 0:
        fail(f"`make {' '.join(words[:1])}` ({label}) exited {done.returncode}: {done.stderr.strip()[-800:]}")
    figures = f" ({time.monotonic() - start:.0f} s, {megabytes(home / 'cache') - before:.0f} MB cached)"
    print(f"ok   {label}{figures if show_time else ''}")


def check_cpu_build(clone: Path, env: dict[str, str]) -> None:
    python = str(clone / ".venv" / "bin" / "python")
    code = "import importlib.metadata as m, torch; print(torch.__version__, [d.metadata['Name'] for d in "
    code += "m.distributions() if d.metadata['Name'].startswith(('nvidia', 'triton'))])"
    shown = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env).stdout.strip()
    if not shown.startswith("2.13.0+cpu []"):
        fail(f"the fresh venv holds torch {shown}, not the CPU build alone")
    print(f"ok   the venv holds torch {shown.split()[0]} and no nvidia-* or triton package")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--installer", choices=("uv", "pip", "auto"), default="auto")
    parser.add_argument("--dev", action="store_true", help="then `make setup-dev`")
    parser.add_argument("--time", action="store_true", help="print each step's wall time and download size")
    parser.add_argument("--download-from", default="", help="an index to fetch the torch CPU wheel from, if needed")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pp_demo_laptop_") as tmp:
        home, clone = Path(tmp), Path(tmp) / "clone"
        (home / "wheel").mkdir()
        wheel = torch_wheel(args.download_from, home / "wheel")
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = laptop_env(home)
        check_no_source(clone, env, args.installer)
        shutil.rmtree(clone / ".venv")
        server, index = serve_index(wheel, home / "index")
        try:
            words = ["reproduce", f"INSTALLER={args.installer}", f"TORCH_INDEX={index}"]
            step(clone, env, f"`make reproduce` from a fresh clone ({args.installer})", words, args.time, home)
            check_cpu_build(clone, env)
            if args.dev:
                words = ["setup-dev", f"INSTALLER={args.installer}", f"TORCH_INDEX={index}"]
                step(clone, env, "`make setup-dev` on top", words, args.time, home)
        finally:
            server.shutdown()
    print("fresh laptop: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
