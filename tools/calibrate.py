"""Fit the clock's constants (``tools/timing.py``) to the minutes instructors measured in a room.

``results/instructor_times.json`` records, per section and per notebook, the minutes two
instructors took to teach the 3-hour plan at teaching speed. Each record names its parts (``##``
headings, ``exercise KEY``, ``key points``, ``open``); this module counts what the clock counts in
those parts of the notebooks as they were measured (the commit the file names, read through git:
a section edited since changes what the room would take, not what it took), and fits one minute
cost per feature so that the worst relative miss over all the records is as small as it can be (every combination of
the values on ``GRID``, the one with the smallest worst miss). The exercises are not fitted: each costs what
``timing.exercise_costs`` says.

    python -m tools.calibrate     # the fitted constants, then each record: measured, clock, miss

The committed constants are the fit rounded to two digits; ``tests/repo/test_clock.py`` holds them
to every record within the file's tolerance. The fit never sees a plan's own minutes: a clock
fitted to the plans it produces only agrees with itself.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from typing import Any

import nbformat
import numpy as np

from tools import episodes, timing

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMES = pathlib.Path("results") / "instructor_times.json"
PER_NOTEBOOK = ("open", "keypoints")
FITTED = (*timing.FEATURES, *PER_NOTEBOOK)


def load(root: pathlib.Path = ROOT) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / TIMES).read_text(encoding="utf-8"))
    return data


def records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every measured record: the sections, the notebooks, then the stretches between breaks."""
    return [*data["sections"], *data["notebooks"], *data.get("stretches", [])]


def measured_notebook(number: str, root: pathlib.Path = ROOT, commit: str | None = None) -> str:
    """Notebook ``number`` as the instructors taught it: its text at the commit the record names
    (``commit``), or the results file's. A checkout without git history cannot say; that is one
    line, not a wrong clock."""
    commit = commit or load(root)["measured_at"]
    path = next((root / "notebooks").glob(f"{number}_*.ipynb")).relative_to(root).as_posix()
    shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True)
    if shown.returncode != 0:
        raise LookupError(f"{path} at {commit[:12]}, the notebooks the instructors timed, needs the git history")
    return shown.stdout


def _notebook(
    number: str, root: pathlib.Path, commit: str | None = None
) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    path = next((root / "notebooks").glob(f"{number}_*.ipynb"))
    nb = nbformat.reads(measured_notebook(number, root, commit), as_version=4)
    authored = nbformat.from_dict({**nb, "cells": episodes._authored(nb)})
    return timing.section_content(authored), timing.exercise_costs(episodes.exercise_kinds(path.stem))


def parts_by_notebook(record: dict[str, Any]) -> dict[str, list[str]]:
    """A record's parts per notebook: a section or notebook record names one notebook and lists its
    parts; a stretch between breaks maps each notebook it taught to its parts."""
    parts = record["parts"]
    return dict(parts) if isinstance(parts, dict) else {record["notebook"]: list(parts)}


def counts(record: dict[str, Any], root: pathlib.Path = ROOT) -> tuple[dict[str, int], int]:
    """What the clock counts in a record's parts, and the fixed minutes of its exercises and of
    the plan's fixed items it holds (a stretch's welcome or wrap-up: ``fixed_minutes``).

    A part that is no heading, exercise or per-notebook item of the notebook raises KeyError
    naming it (a heading renamed since the measurement: rename it in the results file too)."""
    total, fixed = dict.fromkeys(FITTED, 0), int(record.get("fixed_minutes", 0))
    for number, parts in parts_by_notebook(record).items():
        sections, exercises = _notebook(number, root, record.get("measured_at"))
        for part in parts:
            if part == "open":
                total["open"] += 1
            elif part == "key points":
                total["keypoints"] += 1
            elif part.startswith("exercise "):
                fixed += exercises[part.split()[1]]
            elif part in sections:
                for feature, value in sections[part].items():
                    total[feature] += value
            else:
                raise KeyError(f"{TIMES.as_posix()}: notebook {number} has no part {part!r}")
    return total, fixed


def clock_minutes(record: dict[str, Any], constants: dict[str, float], root: pathlib.Path = ROOT) -> float:
    """The clock's minutes for a record, unrounded (the measurements are the instructors' minutes)."""
    total, fixed = counts(record, root)
    return fixed + sum(total[f] * constants[f] for f in FITTED)


# The values tried for each constant (minutes per unit; words: words a minute): a grid of values
# an instructor can say aloud. Switching notebooks is never free (open it, start its kernel, find
# the place), and a cell that shows source or a figure costs 2-3 minutes (the instructors' estimate).
GRID = {
    "words": [float(w) for w in range(40, 102, 2)],
    "code": [c / 10 for c in range(4, 21)],
    "show": [s / 10 for s in range(20, 31)],
    "predict": [p / 10 for p in range(0, 31, 2)],
    "open": [o / 10 for o in range(10, 25, 2)],
    "keypoints": [k / 10 for k in range(10, 27, 2)],
}


def fit(rows: list[tuple[dict[str, int], int, float]]) -> dict[str, float]:
    """The constants on ``GRID`` with the smallest worst relative miss over ``rows`` ((counts,
    fixed minutes, measured) each); words as words a minute, the rest in minutes per unit."""
    measured = np.array([row[2] for row in rows], dtype=float)
    fixed = np.array([row[1] for row in rows], dtype=float)
    best: tuple[float, dict[str, float]] = (np.inf, {})
    inner = [f for f in FITTED if f != "words"]
    mesh = np.stack(np.meshgrid(*(GRID[f] for f in inner), indexing="ij"), -1).reshape(-1, len(inner))
    counts_inner = np.array([[row[0][f] for f in inner] for row in rows], dtype=float)
    words = np.array([row[0]["words"] for row in rows], dtype=float)
    for per_minute in GRID["words"]:  # one slice at a time: the mesh of the others fits in memory
        clock = mesh @ counts_inner.T + fixed + words / per_minute
        worst = (np.abs(clock - measured) / measured).max(axis=1)
        i = int(worst.argmin())
        if worst[i] < best[0]:
            best = (float(worst[i]), {"words": per_minute, **dict(zip(inner, mesh[i].tolist(), strict=True))})
    return best[1]


def as_costs(constants: dict[str, float]) -> dict[str, float]:
    """Words a minute turned into minutes a word, as ``timing.CLOCK`` holds them."""
    return {**constants, "words": 1 / constants["words"]}


def committed() -> dict[str, float]:
    return {**timing.CLOCK}


def main(argv: list[str] | None = None) -> int:
    del argv
    data = load()
    try:
        rows = [(*counts(r), float(r["minutes"])) for r in records(data)]
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 1
    fitted = fit(rows)
    worst = max(abs(clock_minutes(r, as_costs(fitted)) - r["minutes"]) / r["minutes"] for r in records(data))
    for label, constants in ((f"fitted (worst miss {worst:.1%})", fitted), ("committed", as_costs(committed()))):
        shown = [f"{f} {v:.0f} a minute" if f == "words" else f"{f} {v:.2f}" for f, v in constants.items()]
        print(f"{label}: " + ", ".join(shown))
    for record in records(data):
        clock = clock_minutes(record, committed())
        label = f"{record['notebook']} {record.get('what', 'whole notebook')}"
        miss = (clock - record["minutes"]) / record["minutes"]
        print(f"{label:<50} measured {record['minutes']:>3}  clock {clock:5.1f}  {miss:+.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
