"""Time the core path: every core notebook, each in a fresh kernel, summed (``make time-core``).

The core notebooks are those whose episode metadata says ``track: core``. A notebook runs
whole (its optional sections too: cells depend on each other), from the notebooks folder as
``make notebooks`` runs it, and nothing is written back into it. The seconds go into
results/notebook_times.json, which the README and the facilitator guide read (re-run
``make guide`` afterwards); a notebook never stores a timing.

Usage: ``python -m tools.time_core [--all]`` (``--all``: every notebook, not only the core ones).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

from tools import episodes

RESULT = episodes.ROOT / "results" / "notebook_times.json"


def run_seconds(path: pathlib.Path) -> float:
    """Wall-clock seconds of one top-to-bottom run in a fresh python3 kernel (kernel start included)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def _track(path: pathlib.Path) -> str | None:
    track = nbformat.read(path, as_version=4).metadata.get("episode", {}).get("track")
    return str(track) if track else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.time_core", description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="time every notebook, not only the core ones")
    args = parser.parse_args(argv)
    core = [p.name for p in episodes.notebooks() if _track(p) == "core"]
    if not core:
        print("error: no core notebook (run `python tools/episodes.py apply` first)", file=sys.stderr)
        return 1
    seconds = {}
    for path in episodes.notebooks():
        if args.all or path.name in core:
            seconds[path.name] = round(run_seconds(path), 1)
            print(f"{path.name}: {seconds[path.name]:.1f} s", flush=True)
    record = {
        "command": "make time-core",
        "cores": os.cpu_count(),
        "notebooks": {name: seconds[name] for name in core},
        "core_path_seconds": round(sum(seconds[name] for name in core), 1),
    }
    if args.all:
        record["command"], record["all_notebooks"] = "python -m tools.time_core --all", seconds
    RESULT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(
        f"core path: {record['core_path_seconds']:.1f} s on {record['cores']} cores "
        f"-> {RESULT.relative_to(episodes.ROOT)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
