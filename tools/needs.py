"""What each part of a notebook needs: the ``needs`` lists of its episode metadata, checked and set.

A section, an exercise, or the notebook's questions and key points (the metadata's top-level
``needs``) can name the ``##`` sections of the same notebook they cannot be understood without.
``tools/agenda.py`` then refuses nothing but reports, for each plan, what a take leaves out that
something it keeps needs (tested: no plan leaves one out). Headings are renamed as notebooks are
rewritten, so a ``needs`` naming a heading that no longer exists is a problem, named with the
notebook, not a silent no-op.

``set_part`` is the one way the tools change a track or a ``needs`` (``python -m tools.episodes set``),
so such an edit can be re-run after a merge instead of typed into JSON.

One key point can also name what it needs on its own (``keypoint_needs``, by its number from 1;
``set --part keypoint:N``): a plan's wrap-up takes a key point only where the plan taught those
sections (``tools/agenda.py``, ``keypoints``).
"""

from __future__ import annotations

from typing import Any

EXERCISES = "Exercises"
KEYPOINTS = "keypoints"  # the name `set` gives the questions and key points
ONE_KEYPOINT = "keypoint:"  # `set --part keypoint:N`: the needs of the N-th key point alone
TRACKS = ("core", "optional")


def _owners(ep: dict[str, Any]) -> list[tuple[str, str | None, Any]]:
    """(who, the heading it is, its needs) for every part that may name needs."""
    owners: list[tuple[str, str | None, Any]] = [("the questions and key points", None, ep.get("needs", []))]
    for heading, info in ep["sections"].items():
        owners.append((f"section {heading!r}", heading, info.get("needs", [])))
    for key, info in (ep["sections"].get(EXERCISES, {}).get("exercises") or {}).items():
        owners.append((f"exercise {key}", None, info.get("needs", []) if isinstance(info, dict) else None))
    for number, needs in (ep.get("keypoint_needs") or {}).items():
        owners.append((f"key point {number}", None, needs))
    return owners


def problems(ep: dict[str, Any], headings: list[str], name: str) -> list[str]:
    """A ``needs`` that is not a list of other ``##`` headings of the notebook, one line each."""
    out = []
    for who, itself, needs in _owners(ep):
        if not (isinstance(needs, list) and all(isinstance(n, str) for n in needs)):
            out.append(f"{name}: {who}: needs must be a list of ## headings")
            continue
        unknown = [n for n in needs if n not in headings or n == itself]
        if unknown:
            out.append(f"{name}: {who} needs {unknown}, which is no other ## heading of the notebook")
    count = len(ep.get("keypoints") or [])
    stray = [n for n in (ep.get("keypoint_needs") or {}) if n not in {str(i) for i in range(1, count + 1)}]
    if stray:
        out.append(f"{name}: keypoint_needs names key points {stray}; there are {count}")
    return out


def set_part(ep: dict[str, Any], part: str, track: str | None, needs: list[str] | None) -> None:
    """Set the track and/or the needs of ``part``: a ``##`` heading, an exercise key, or "keypoints"."""
    exercises = ep["sections"].get(EXERCISES, {}).get("exercises") or {}
    if part.startswith(ONE_KEYPOINT):
        number = part[len(ONE_KEYPOINT) :]
        if track is not None or not number.isdigit() or not 1 <= int(number) <= len(ep.get("keypoints") or []):
            raise ValueError(f"{part!r}: no such key point, or a key point given a track")
        by_number = ep.setdefault("keypoint_needs", {})
        if needs:
            by_number[number] = needs
        elif needs is not None:
            by_number.pop(number, None)
        if not by_number:
            ep.pop("keypoint_needs")
        return
    if part == KEYPOINTS:
        target = ep
    elif part in ep["sections"]:
        target = ep["sections"][part]
    elif part in exercises:
        target = exercises[part]
    else:
        raise ValueError(f"{part!r} is no section, exercise or {KEYPOINTS!r}; sections: {list(ep['sections'])}")
    if track is not None:
        if target is not ep["sections"].get(part) or track not in TRACKS:
            raise ValueError(f"only a section has a track, one of {TRACKS}: not {part!r} {track!r}")
        target["track"] = track
    if needs is not None:
        if needs:
            target["needs"] = needs
        else:
            target.pop("needs", None)
