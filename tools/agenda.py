"""Workshop agendas computed from the notebooks' episode metadata (see tools/episodes.py).

(An agenda of the room, not a pipeline schedule: those are ``pp_demo.pipeline.schedules``.)

Three formats, each a list of items whose minutes add up to the end time:

- 90 minutes: the core sections of the core notebooks, one break;
- 3 hours: every section of the core notebooks, then the core sections of the optional
  notebooks, in order, as long as they fit; two breaks;
- a full day: everything, a hands-on session with the checker on the attendees' own stack,
  two coffee breaks and lunch.
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
    closing: list[Item]  # after the episodes (before the wrap-up)
    breaks: list[Item]  # spread evenly over the episodes
    wrap_up: Item


FORMATS = (
    Format(
        "90 minutes",
        90,
        Item(5, "Welcome; everyone's `make doctor` is green (set-up was homework)"),
        [],
        [Item(10, "Break", True)],
        Item(5, "Wrap-up: the key points, questions"),
    ),
    Format(
        "3 hours",
        180,
        Item(10, "Welcome; `make doctor` on every machine, fix what fails"),
        [],
        [Item(10, "Break", True), Item(10, "Break", True)],
        Item(5, "Wrap-up: the key points, questions"),
    ),
    Format(
        "a full day",
        420,
        Item(20, "Welcome; set-up from the wheelhouse, `make doctor` on every machine"),
        [
            Item(
                60,
                "Hands-on: `python -m pp_demo check` on a pipeline forward of your own stack (docs/checker.md)",
            )
        ],
        [Item(15, "Coffee", True), Item(60, "Lunch", True), Item(15, "Coffee", True)],
        Item(10, "Wrap-up: the key points, questions, feedback"),
    ),
)


def _sections(ep: dict[str, Any], order: list[str], core_only: bool) -> list[str]:
    return [h for h in order if not core_only or ep["sections"][h]["track"] == "core"]


def episode_item(name: str, ep: dict[str, Any], order: list[str], core_only: bool) -> Item:
    """One notebook's block: the sections taken, and their minutes."""
    taken = _sections(ep, order, core_only)
    minutes = sum(ep["sections"][h]["minutes"] for h in taken)
    teaching = [h for h in taken if h != EXERCISES]
    which = "all sections" if len(taken) == len(order) else "core sections"
    text = f"**{name}**, {which}: " + "; ".join(teaching) + ("; exercises" if EXERCISES in taken else "")
    return Item(minutes, text)


def _fixed_minutes(fmt: Format) -> int:
    return fmt.opening.minutes + fmt.wrap_up.minutes + sum(i.minutes for i in fmt.closing + fmt.breaks)


def episode_items(fmt: Format, episodes: list[tuple[str, dict[str, Any], list[str]]]) -> list[Item]:
    """The notebooks a format covers, as items; ``episodes``: (name, metadata, section order)."""
    core = [(n, ep, order) for n, ep, order in episodes if ep["track"] == "core"]
    optional = [(n, ep, order) for n, ep, order in episodes if ep["track"] != "core"]
    if fmt.budget <= 90:
        return [episode_item(n, ep, order, core_only=True) for n, ep, order in core]
    if fmt.budget <= 180:
        room = fmt.budget - _fixed_minutes(fmt) - sum(episode_item(*e, core_only=False).minutes for e in core)
        chosen = []
        for n, ep, order in optional:
            item = episode_item(n, ep, order, core_only=True)
            if item.minutes <= room:
                chosen.append(n)
                room -= item.minutes
        return [
            episode_item(n, ep, order, core_only=ep["track"] != "core")
            for n, ep, order in episodes
            if ep["track"] == "core" or n in chosen
        ]
    return [episode_item(n, ep, order, core_only=False) for n, ep, order in episodes]


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
