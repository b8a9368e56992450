"""Workshop plans: which notebooks, which of their sections and exercises each format takes, in order.

(An agenda of the room, not a pipeline schedule: those are ``pp_demo.ranks.schedules``.)

Every plan is written out as a list of ``Take``: a notebook with its "core" or "all" sections
and the exercises done in the room (the others are homework), or a fixed-minute "demo" the
instructor runs. The minutes come from the notebooks' content (``tools/timing.py``: words
spoken, code cells run and discussed, exercises with their debrief), so a plan that no longer
fits its clock is caught by a test (``tests/repo/test_episodes.py``) instead of by a room that
runs late. A section taken needs what its metadata's ``needs`` names (``unmet_needs``), and the wrap-up
takes only the key points whose sections the plan taught (``keypoints``; the metadata's
``keypoint_needs`` names them). Each notebook taught also costs the clock's minutes to switch to it
and read its key points (``timing.notebook_minutes_extra``).

- 90 minutes: notebook 01, then a demo of 03's reproduction on real models (set-up was homework);
- 3 hours: the room's path, 01, 02, 03, 05, each notebook taught whole, top to bottom (written
  for the room: what a longer day adds lives in notebooks of its own), at most 150 minutes of
  content, four exercises done and debriefed in the room (01.3, 02.1, 03.1, 05.1), two breaks,
  no stretch between them over ``ROOM_STRETCH`` minutes, and ``reserve`` minutes of the 180 left
  for questions;
- 90 minutes: 01 whole, then a demo of 03's reproduction;
- a full day: the room's path, then the day's own notebooks (04, 12: their core sections), a
  demo of 06, coffee and lunch. 07, 08, 09, 10, 11 and 13 are reading for after (the clock fits no
  more; 11 needs `make deepspeed`).

06 is a demo everywhere: ColossalAI is no attendee's homework (it cannot be installed on native
Windows), so the instructor runs it and the room reads the stored outputs or the site.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools import timing

EXERCISES = "Exercises"
Episodes = list[tuple[str, dict[str, Any], list[str]]]  # (title, episode metadata, headings in order)


@dataclass(frozen=True)
class Item:
    minutes: int
    what: str
    is_break: bool = False
    latest: int | None = None  # a break: the latest minute it may start at


@dataclass(frozen=True)
class Take:
    """One notebook in a plan: its "core" or "all" sections, or a "demo" of ``minutes``."""

    number: str
    sections: str = "core"
    exercises: tuple[str, ...] | None = None  # done in the room; None: all of them
    minutes: int = 0  # a demo's only


@dataclass(frozen=True)
class Format:
    title: str
    budget: int  # minutes in the room, breaks included
    reserve: int  # of those, left unplanned: questions, a late start
    opening: Item
    takes: tuple[Take, ...]
    closing: list[Item]  # after the episodes (before the wrap-up)
    breaks: list[Item]  # each placed before the first block that would end after its latest start
    wrap_up: Item


# The longest planned stretch between breaks of the 3-hour plan: a room that sits longer stops listening.
ROOM_STRETCH = 60
WELCOME = "Welcome and set-up: every laptop's doctor is green and Lab is open, or its owner is paired or on the site"
FORMATS = (
    Format(
        "90 minutes",
        90,
        5,
        Item(10, WELCOME + " (set-up was homework)"),
        (Take("01", "all", ("01.3",)), Take("03", "demo", minutes=10)),
        [],
        [],
        Item(5, "Wrap-up: the key points, questions, one-minute feedback"),
    ),
    Format(
        "3 hours",
        180,
        10,
        Item(10, WELCOME + " (set-up was homework)"),
        (
            Take("01", "all", ("01.3",)),
            Take("02", "all", ("02.1",)),
            Take("03", "all", ("03.1",)),
            Take("05", "all", ("05.1",)),
        ),
        [],
        [
            Item(10, "Break", True, latest=ROOM_STRETCH),
            Item(5, "Break (stand up, stretch)", True, latest=2 * ROOM_STRETCH + 10),
        ],
        Item(5, "Wrap-up: the key points below, questions, one-minute feedback"),
    ),
    Format(
        "a full day",
        420,
        15,
        Item(20, "Welcome and set-up: from the wheelhouse or the shared machine, the doctor on every laptop"),
        (
            Take("01", "all"),
            Take("02", "all"),
            Take("03", "all"),
            Take("05", "all"),
            Take("04", "core"),
            Take("12", "core"),
            Take("06", "demo", minutes=15),
        ),
        [],
        [
            Item(15, "Coffee", True, latest=120),
            Item(45, "Lunch", True, latest=215),
            Item(15, "Coffee", True, latest=320),
        ],
        Item(10, "Wrap-up: the key points, questions, feedback"),
    ),
)
ROOM_NOTEBOOKS = ("01", "02", "03", "05")  # the room's path: each taught whole, in this order


def find(episodes: Episodes, number: str) -> tuple[str, dict[str, Any], list[str]]:
    found = [e for e in episodes if e[0][:2] == number]
    if not found:
        raise KeyError(f"a plan names notebook {number}, which does not exist")
    return found[0]


def exercises_of(ep: dict[str, Any]) -> dict[str, dict[str, Any]]:
    exercises: dict[str, dict[str, Any]] = ep["sections"].get(EXERCISES, {}).get("exercises") or {}
    return exercises


def taken(take: Take, ep: dict[str, Any], order: list[str]) -> tuple[list[str], list[str]]:
    """The sections (in order, "Exercises" left out) and the exercises a take covers."""
    if take.sections == "demo":
        return [], []
    sections = [h for h in order if take.sections == "all" or ep["sections"][h]["track"] == "core"]
    known = exercises_of(ep)
    chosen = list(known) if take.exercises is None else list(take.exercises)
    unknown = [key for key in chosen if key not in known]
    if unknown:
        raise KeyError(f"a plan takes exercises {unknown}; the notebook has {sorted(known)}")
    with_exercises = EXERCISES in sections
    return [h for h in sections if h != EXERCISES], chosen if with_exercises else []


def unmet_needs(ep: dict[str, Any], sections: list[str], exercises: list[str]) -> list[str]:
    """What a take leaves out that something it keeps needs: "<needer> needs <heading>" each."""
    if not sections and not exercises:
        return []
    needers = [("its key points", ep.get("needs", []))]
    needers += [(f"section {h!r}", ep["sections"][h].get("needs", [])) for h in sections]
    if exercises:
        needers.append(("the exercises", ep["sections"][EXERCISES].get("needs", [])))
    needers += [(f"exercise {k}", exercises_of(ep)[k].get("needs", [])) for k in exercises]
    return [f"{who} needs {need!r}" for who, needs in needers for need in needs if need not in sections]


def minutes_of(ep: dict[str, Any], sections: list[str], exercises: list[str]) -> int:
    every = exercises_of(ep)
    minutes: int = sum(ep["sections"][h]["minutes"] for h in sections) + sum(every[k]["minutes"] for k in exercises)
    return minutes


def keypoints(ep: dict[str, Any], sections: list[str]) -> tuple[list[str], list[str]]:
    """The key points a take teaches (each section its ``keypoint_needs`` names is taken), and
    those it leaves out."""
    needed = ep.get("keypoint_needs") or {}
    kept: list[str] = []
    dropped: list[str] = []
    for number, point in enumerate(ep["keypoints"], 1):
        (kept if all(h in sections for h in needed.get(str(number), [])) else dropped).append(point)
    return kept, dropped


def episode_item(title: str, ep: dict[str, Any], order: list[str], take: Take) -> Item:
    """One notebook's block: the sections and exercises taken, and their minutes, with the
    clock's minutes to switch to the notebook and read its key points."""
    if take.sections == "demo":
        return Item(take.minutes, f"**{title}**, demo of its main result (the instructor runs it)")
    sections, exercises = taken(take, ep, order)
    which = "all sections" if take.sections == "all" else "core sections"
    text = f"**{title}**, {which}: " + "; ".join(sections)
    homework = [key for key in exercises_of(ep) if key not in exercises]
    if exercises:
        text += "; in the room: " + _exercises(exercises)
    if homework:
        text += "; homework: " + _exercises(homework)
    return Item(minutes_of(ep, sections, exercises) + timing.notebook_minutes_extra(), text)


def _exercises(keys: list[str]) -> str:
    return ("exercise " if len(keys) == 1 else "exercises ") + ", ".join(keys)


def episode_items(fmt: Format, episodes: Episodes) -> list[Item]:
    return [episode_item(*find(episodes, take.number), take) for take in fmt.takes]


def plan(fmt: Format, episodes: Episodes) -> list[Item]:
    """The whole schedule: opening, episodes with each break before the block that would pass
    its latest start, closing, wrap-up."""
    out, clock_now, pending = [fmt.opening], fmt.opening.minutes, list(fmt.breaks)
    for block in episode_items(fmt, episodes) + fmt.closing:
        while pending and pending[0].latest is not None and clock_now + block.minutes > pending[0].latest:
            out.append(pending.pop(0))
            clock_now += out[-1].minutes
        out.append(block)
        clock_now += block.minutes
    return out + pending + [fmt.wrap_up]


def content_minutes(fmt: Format, items: list[Item]) -> int:
    """What is taught: every item but the opening and the breaks."""
    return sum(item.minutes for item in items if not item.is_break and item is not fmt.opening)


def summary(fmt: Format, items: list[Item]) -> str:
    """One line under a schedule: the time in the room, the time planned, the time left free."""
    total = total_minutes(items)
    return (
        f"{fmt.budget} minutes in the room; {total} planned, of which {content_minutes(fmt, items)} of content; "
        f"{fmt.budget - total} left free for questions and a late start (at least {fmt.reserve})."
    )


def wrap_up_points(fmt: Format, episodes: Episodes) -> list[tuple[str, list[str], list[str]]]:
    """Per notebook taught: (title, the key points the wrap-up takes, those left to the full day)."""
    out = []
    for take in fmt.takes:
        title, ep, order = find(episodes, take.number)
        if take.sections != "demo":
            out.append((title, *keypoints(ep, taken(take, ep, order)[0])))
    return out


def total_minutes(items: list[Item]) -> int:
    return sum(item.minutes for item in items)


def starts(items: list[Item]) -> list[int]:
    """The minute each item starts at, from the beginning."""
    out, now = [], 0
    for item in items:
        out.append(now)
        now += item.minutes
    return out


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def table(items: list[Item]) -> list[str]:
    """Markdown rows: start (h:mm from the beginning), minutes, what; then the end time."""
    rows = ["| start | min | what |", "|---|---|---|"]
    for start, item in zip(starts(items), items, strict=True):
        what = f"*{item.what}*" if item.is_break else item.what
        rows.append(f"| {clock(start)} | {item.minutes} | {what} |")
    end = total_minutes(items)
    rows.append(f"| {clock(end)} | | end ({end} min) |")
    return rows
