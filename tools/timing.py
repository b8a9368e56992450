"""How long a notebook takes to teach, computed from its content with constants fitted to a room.

A hand-set minute count drifts from the notebook it describes; a count computed from the
notebook cannot. The constants are not rules of thumb: they are fitted (``tools/calibrate.py``)
to the minutes three instructors measured per section (and, the third, per stretch between breaks)
at *teaching* speed, recorded in
``results/instructor_times.json``, and a test holds the clock to each measured section within
15 % (``tests/repo/test_clock.py``). A clock fitted to its own plans proves nothing: the old one
(100 words a minute, 1.5 minutes a code cell, nothing else) put two plans at 161 and 167 minutes
that rooms took 190-205 and 201 minutes to teach. What the clock counts:

- prose, spoken and explained, at ``WORDS_PER_MINUTE``;
- a code cell run and read, ``CODE_CELL_MINUTES`` (one that prints nothing, such as the imports,
  is run in passing: nothing); a cell that prints source code or draws a
  figure, ``SHOW_CELL_MINUTES`` instead (the room reads it line by line);
- a prediction the room makes before reading on (a markdown cell that opens with
  ``**Predict``), ``PREDICTION_MINUTES``;
- per notebook taught, ``OPEN_MINUTES`` to switch to it and ``KEYPOINTS_MINUTES`` for its
  key-point cell (``notebook_minutes_extra``: a plan adds them to each notebook it takes);
- an exercise, ``VALUE_EXERCISE_MINUTES`` when its answer is a value and
  ``FUNCTION_EXERCISE_MINUTES`` when it is a function to write, plus ``DEBRIEF_MINUTES``.

A section is rounded to the nearest minute (at least 1). Sections are the notebook's ``##``
headings (what precedes the first one counts towards it); the "Exercises" section is costed by
its exercises, not by its words.
"""

from __future__ import annotations

import math
import re
from typing import Any

# fitted by `python -m tools.calibrate` to results/instructor_times.json, rounded to two digits
WORDS_PER_MINUTE = 56
CODE_CELL_MINUTES = 1.1
SHOW_CELL_MINUTES = 2.2
PREDICTION_MINUTES = 1.8
OPEN_MINUTES = 1.8
KEYPOINTS_MINUTES = 2.2
# an exercise (not fitted: the rooms measured one exercise each, at these minutes)
VALUE_EXERCISE_MINUTES = 4
FUNCTION_EXERCISE_MINUTES = 8
DEBRIEF_MINUTES = 2
EXERCISES = "Exercises"
NOT_A_SECTION = "What you will learn"
GENERATED = ("episode-header", "episode-keypoints")  # rendered from metadata; read with the title
PREDICTION = "**Predict"  # how a markdown cell that asks the room for a prediction opens
FEATURES = ("words", "code", "show", "predict")  # what section_content counts

CONSTANTS_TEXT = (
    f"prose spoken at {WORDS_PER_MINUTE} words a minute; {CODE_CELL_MINUTES} minutes per code cell run and "
    f"read, {SHOW_CELL_MINUTES} per cell that prints source code or a figure; {PREDICTION_MINUTES} per "
    f"prediction the room makes; a section to the nearest minute, at least 1; per notebook taught, "
    f"{OPEN_MINUTES} minutes to switch to it and {KEYPOINTS_MINUTES} for its key points; an exercise "
    f"{VALUE_EXERCISE_MINUTES} minutes when the answer is a value, {FUNCTION_EXERCISE_MINUTES} when it is "
    f"a function, plus {DEBRIEF_MINUTES} minutes of debrief each. The constants are fitted to three "
    "instructors' measured minutes per section and per stretch between breaks "
    "(`results/instructor_times.json`, `python -m tools.calibrate`)"
)


def _words(markdown: str) -> int:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)  # a code block is shown, not read aloud
    text = re.sub(r"\]\([^)\s]*\)", "]", text)  # nor is a link's address, only its label
    return len(re.findall(r"[\w'’-]+", text))


def shows(cell: Any) -> bool:
    """A code cell that prints source code or draws a figure: the room reads it, not only its result."""
    figure = any("image/png" in (out.get("data") or {}) for out in cell.get("outputs", []))
    return figure or "getsource" in cell.source or "plt.show()" in cell.source


def _empty() -> dict[str, int]:
    return dict.fromkeys(FEATURES, 0)


def section_content(nb: Any) -> dict[str, dict[str, int]]:
    """Per ``##`` section, in order: its prose words, code cells, cells that show source or a
    figure (not counted as code cells too), and predictions."""
    out: dict[str, dict[str, int]] = {}
    current = None
    pending = _empty()
    for cell in nb.cells:
        bucket = out[current] if current else pending
        if cell.cell_type == "code":
            if cell.source.strip() and (cell.get("outputs") or shows(cell)):  # a silent cell is run, not read
                bucket["show" if shows(cell) else "code"] += 1
            continue
        if cell.source.lstrip().startswith(PREDICTION):
            bucket["predict"] += 1
        for line in cell.source.splitlines():
            heading = line[3:].strip() if line.startswith("## ") else None
            if heading and heading != NOT_A_SECTION:
                current = heading
                out[current] = dict(pending) if not out else _empty()  # the title counts towards the first
                bucket = out[current]
                continue
            bucket["words"] += _words(line)
    return out


def exact_minutes(content: dict[str, int], constants: dict[str, float] | None = None) -> float:
    """A section's minutes before rounding; ``constants``: per feature, minutes per unit (default: the clock's)."""
    per = constants or CLOCK
    return sum(content.get(feature, 0) * per[feature] for feature in FEATURES)


CLOCK = {
    "words": 1 / WORDS_PER_MINUTE,
    "code": CODE_CELL_MINUTES,
    "show": SHOW_CELL_MINUTES,
    "predict": PREDICTION_MINUTES,
    "open": OPEN_MINUTES,
    "keypoints": KEYPOINTS_MINUTES,
}


def notebook_minutes_extra() -> int:
    """What a plan adds to each notebook it teaches: switching to it and its key points."""
    return math.floor(OPEN_MINUTES + KEYPOINTS_MINUTES + 0.5)


def exercise_costs(kinds: dict[str, str]) -> dict[str, int]:
    """Minutes per exercise; ``kinds``: "value" or "function" by exercise key."""
    each = {"value": VALUE_EXERCISE_MINUTES, "function": FUNCTION_EXERCISE_MINUTES}
    return {key: each[kind] + DEBRIEF_MINUTES for key, kind in kinds.items()}


def section_minutes(content: dict[str, int]) -> int:
    """To the nearest minute, at least one: a section is never free to teach."""
    return max(1, math.floor(exact_minutes(content) + 0.5))


def notebook_minutes(nb: Any, exercise_kinds: dict[str, str]) -> dict[str, int]:
    """Minutes per section, the exercises section from its exercises."""
    content = section_content(nb)
    minutes = {h: section_minutes(c) for h, c in content.items()}
    if exercise_kinds:  # exercises are costed by what they ask, not by the words that ask it
        minutes[EXERCISES] = sum(exercise_costs(exercise_kinds).values())
    return minutes
