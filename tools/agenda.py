"""Workshop plans: which notebooks (and which of their sections) each format takes, in order.

(An agenda of the room, not a pipeline schedule: those are ``pp_demo.pipeline.schedules``.)

Every plan is written out as a list: the notebooks it teaches, each with "all" its sections,
its "core" sections, or a fixed-minute "demo". The minutes of a notebook come from its content
(``tools/timing.py``: words, code cells, exercises), so a plan that no longer fits its clock is
caught by a test (``tests/repo/test_episodes.py``) instead of by a room that runs late.

- 90 minutes: notebook 01 and 03, core sections (set-up was homework);
- 3 hours: the core path 01, 02, 03, 05 (core sections), and a 10-minute demo of 06's result;
- a full day: the core path in full, then 04, 06 and 07 (core sections), a hands-on session with
  the checker, coffee and lunch. 08, 09 and 10 are reading for after the day.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EXERCISES = "Exercises"


@dataclass(frozen=True)
class Item:
    minutes: int
    what: str
    is_break: bool = False


@dataclass(frozen=True)
class Format:
    title: str
    budget: int  # minutes available, breaks included
    opening: Item
    episodes: tuple[tuple[str, str], ...]  # (notebook number, "all" | "core" | "demo N")
    closing: list[Item]  # after the episodes (before the wrap-up)
    breaks: list[Item]  # spread evenly over the episodes
    wrap_up: Item


FORMATS = (
    Format(
        "90 minutes",
        90,
        Item(5, "Welcome; everyone's `make doctor` is green (set-up was homework)"),
        (("01", "core"), ("03", "core")),
        [],
        [],
        Item(5, "Wrap-up: the key points, questions, one-minute feedback"),
    ),
    Format(
        "3 hours",
        180,
        Item(5, "Welcome; everyone's `make doctor` is green (set-up was homework)"),
        (("01", "core"), ("02", "core"), ("03", "core"), ("05", "core"), ("06", "demo 10")),
        [],
        [Item(10, "Break", True)],
        Item(5, "Wrap-up: the key points, questions, one-minute feedback"),
    ),
    Format(
        "a full day",
        420,
        Item(20, "Welcome; set-up from the wheelhouse, `make doctor` on every machine"),
        (("01", "all"), ("02", "all"), ("03", "all"), ("05", "all"), ("04", "core"), ("06", "core"), ("07", "core")),
        [
            Item(
                30,
                "Hands-on: `python -m pp_demo check` on a pipeline forward of your own stack (docs/checker.md)",
            )
        ],
        [Item(15, "Coffee", True), Item(45, "Lunch", True), Item(15, "Coffee", True)],
        Item(10, "Wrap-up: the key points, questions, feedback"),
    ),
)


def _number(name: str) -> str:
    return name[:2]


def episode_item(name: str, ep: dict[str, Any], order: list[str], how: str) -> Item:
    """One notebook's block: the sections taken, and their minutes (computed from content)."""
    if how.startswith("demo"):
        return Item(int(how.split()[1]), f"**{name}**, demo of its main result (the instructor runs it)")
    taken = [h for h in order if how == "all" or ep["sections"][h]["track"] == "core"]
    minutes = sum(ep["sections"][h]["minutes"] for h in taken)
    teaching = [h for h in taken if h != EXERCISES]
    which = "all sections" if len(taken) == len(order) else "core sections"
    text = f"**{name}**, {which}: " + "; ".join(teaching) + ("; exercises" if EXERCISES in taken else "")
    return Item(minutes, text)


def episode_items(fmt: Format, episodes: list[tuple[str, dict[str, Any], list[str]]]) -> list[Item]:
    """The notebooks a format covers, in its order; ``episodes``: (name, metadata, section order)."""
    by_number = {_number(name): (name, ep, order) for name, ep, order in episodes}
    missing = [number for number, _ in fmt.episodes if number not in by_number]
    if missing:
        raise KeyError(f"the {fmt.title} plan names notebooks that do not exist: {missing}")
    return [episode_item(*by_number[number], how) for number, how in fmt.episodes]


def plan(fmt: Format, episodes: list[tuple[str, dict[str, Any], list[str]]]) -> list[Item]:
    """The whole schedule: opening, episodes with the breaks spread evenly, closing, wrap-up."""
    blocks = episode_items(fmt, episodes) + fmt.closing
    total = sum(i.minutes for i in blocks)
    out, done, pending = [fmt.opening], 0, list(fmt.breaks)
    for number, block in enumerate(blocks):
        out.append(block)
        done += block.minutes
        share = (len(fmt.breaks) - len(pending) + 1) / (len(fmt.breaks) + 1)
        if pending and done >= share * total and number < len(blocks) - 1:
            out.append(pending.pop(0))
    return out + pending + [fmt.wrap_up]


def total_minutes(items: list[Item]) -> int:
    return sum(item.minutes for item in items)


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def table(items: list[Item]) -> list[str]:
    """Markdown rows: start (h:mm from the beginning), minutes, what; then the end time."""
    rows = ["| start | min | what |", "|---|---|---|"]
    start = 0
    for item in items:
        what = f"*{item.what}*" if item.is_break else item.what
        rows.append(f"| {clock(start)} | {item.minutes} | {what} |")
        start += item.minutes
    rows.append(f"| {clock(start)} | | end ({start} min) |")
    return rows
