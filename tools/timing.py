"""How long a notebook takes to teach, computed from its content with fixed constants.

A hand-set minute count drifts from the notebook it describes; a count computed from the
notebook cannot. The constants are an instructor's rules of thumb at *teaching* speed, not
reading speed, written once here and printed in the guide:

- prose is spoken at ``WORDS_PER_MINUTE`` (read aloud and explained, slower than read silently),
  a section rounded to the nearest minute (at least 1);
- every code cell costs ``CODE_CELL_MINUTES`` (run it, point at the output, take a question);
- an exercise costs ``VALUE_EXERCISE_MINUTES`` when its answer is a value and
  ``FUNCTION_EXERCISE_MINUTES`` when it is a function to write, plus ``DEBRIEF_MINUTES``.

Sections are the notebook's ``##`` headings (what precedes the first one counts towards it);
the "Exercises" section is costed by its exercises, not by its words.
"""

from __future__ import annotations

import math
import re
from typing import Any

WORDS_PER_MINUTE = 100
CODE_CELL_MINUTES = 1.5
VALUE_EXERCISE_MINUTES = 4
FUNCTION_EXERCISE_MINUTES = 8
DEBRIEF_MINUTES = 2
EXERCISES = "Exercises"
NOT_A_SECTION = "What you will learn"
GENERATED = ("episode-header", "episode-keypoints")  # rendered from metadata; read with the title

CONSTANTS_TEXT = (
    f"prose spoken at {WORDS_PER_MINUTE} words a minute; {CODE_CELL_MINUTES} minutes per code cell, run and "
    f"discussed; a section to the "
    f"nearest minute, at least 1; an exercise "
    f"{VALUE_EXERCISE_MINUTES} minutes when the answer is a value, {FUNCTION_EXERCISE_MINUTES} when it is "
    f"a function, plus {DEBRIEF_MINUTES} minutes of debrief each"
)


def _words(markdown: str) -> int:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)  # a code block is shown, not read aloud
    text = re.sub(r"\]\([^)\s]*\)", "]", text)  # nor is a link's address, only its label
    return len(re.findall(r"[\w'’-]+", text))


def section_content(nb: Any) -> dict[str, dict[str, int]]:
    """Per ``##`` section, in order: its prose words and code cells."""
    out: dict[str, dict[str, int]] = {}
    current = None
    pending = {"words": 0, "code": 0}
    for cell in nb.cells:
        bucket = out[current] if current else pending
        if cell.cell_type == "code":
            bucket["code"] += 1 if cell.source.strip() else 0
            continue
        for line in cell.source.splitlines():
            heading = line[3:].strip() if line.startswith("## ") else None
            if heading and heading != NOT_A_SECTION:
                current = heading
                out[current] = {"words": 0, "code": 0}
                if len(out) == 1:  # the title and introduction count towards the first section
                    out[current] = dict(pending)
                bucket = out[current]
                continue
            bucket["words"] += _words(line)
    return out


def exercise_costs(kinds: dict[str, str]) -> dict[str, int]:
    """Minutes per exercise; ``kinds``: "value" or "function" by exercise key."""
    each = {"value": VALUE_EXERCISE_MINUTES, "function": FUNCTION_EXERCISE_MINUTES}
    return {key: each[kind] + DEBRIEF_MINUTES for key, kind in kinds.items()}


def section_minutes(content: dict[str, int]) -> int:
    """To the nearest minute, at least one: a section is never free to teach."""
    exact = content["words"] / WORDS_PER_MINUTE + content["code"] * CODE_CELL_MINUTES
    return max(1, math.floor(exact + 0.5))


def notebook_minutes(nb: Any, exercise_kinds: dict[str, str]) -> dict[str, int]:
    """Minutes per section, the exercises section from its exercises."""
    content = section_content(nb)
    minutes = {h: section_minutes(c) for h, c in content.items()}
    if exercise_kinds:  # exercises are costed by what they ask, not by the words that ask it
        minutes[EXERCISES] = sum(exercise_costs(exercise_kinds).values())
    return minutes
