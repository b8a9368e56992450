"""Episode metadata of the notebooks (The Carpentries' lesson format), and the two cells shown from it.

Every notebook carries ``metadata["episode"]``::

    {"track": "core" | "optional",
     "teaching_minutes": int, "exercise_minutes": int,
     "questions": [1-3 str], "objectives": [str, ...], "keypoints": [str, ...],
     "needs": ["<## heading>", ...],
     "sections": {"<## heading>": {"track": "core" | "optional", "minutes": int,
                                   "needs": ["<## heading>", ...]}, ...}}

Every ``##`` heading of the notebook is a section (its ``###`` belong to it); "Exercises" is the
section where the exercise minutes are spent, the others share the teaching minutes. Its entry
also holds ``"exercises": {"01.1": {"minutes": int, "needs": [...]}, ...}``, one per exercise
of the notebook, so a plan can take some of them. ``needs`` (optional everywhere) names the
sections a section, an exercise, or (at the top) the questions and key points cannot be
understood without: a plan that takes one must take what it needs (``tools/agenda.py``, tested).
Minutes are computed from the content (``tools/timing.py``), never typed. The
metadata is shown in two generated markdown cells found by their ids, wherever they moved:
``episode-header`` right after the title cell (questions, objectives, minutes; in a notebook
whose code imports ColossalAI, how to follow without it) and
``episode-keypoints`` last. ``apply`` rewrites only those two cells and the metadata; code cells
and their outputs are never touched, so no notebook needs re-executing.

It lives in tools/, like build_site.py: it edits this repository's files and is no part of the
workbook's API. Usage (from the repository root)::

    python -m tools.episodes apply --from-seed [NB ...]   # once: tools/episode_seed.json -> notebooks
    python -m tools.episodes apply [NB ...]               # re-render the two cells from the metadata
    python -m tools.episodes check                        # exit 1 on a problem, one line each
    python -m tools.episodes set NB --part P [--track T] [--needs H ...]   # then apply (tools/needs.py)

The guide built from this metadata is ``python -m tools.guide`` (``make guide``): this module
imports only ``timing`` (the minutes a notebook takes) and ``needs``, so the tools import each other one way.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from typing import Any

import nbformat

from pp_demo.pooling.failure import render_failures
from tools import needs, timing

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEED = ROOT / "tools" / "episode_seed.json"
HEADER_ID, KEYPOINTS_ID = "episode-header", "episode-keypoints"
EXERCISES = "Exercises"
TRACKS = ("core", "optional")


class EpisodeError(ValueError):
    """Bad metadata or seed: the message is one line naming the notebook and the problem."""


def notebooks(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    return sorted((root / "notebooks").glob("[0-9]*.ipynb"))


def _authored(nb: Any) -> list[Any]:
    return [cell for cell in nb.cells if cell.get("id") not in (HEADER_ID, KEYPOINTS_ID)]


def section_weights(nb: Any) -> dict[str, int]:
    """Each ``##`` section, in order, with its prose words (``tools/timing.py`` splits them)."""
    content = timing.section_content(nbformat.from_dict({**nb, "cells": _authored(nb)}))
    return {heading: counts["words"] for heading, counts in content.items()}


def from_seed(nb: Any, seed: dict[str, Any], name: str) -> dict[str, Any]:
    """The episode metadata of one notebook from its seed entry and its current sections."""
    weights = section_weights(nb)
    if EXERCISES not in weights:
        raise EpisodeError(f"{name}: no '## {EXERCISES}' section")
    tracks = seed["sections"]
    unlisted = [h for h in weights if h not in tracks and "default_track" not in seed]
    if unlisted:
        raise EpisodeError(f"{name}: sections missing from the seed: {unlisted}")
    keys = ("track", "questions", "objectives", "keypoints")
    episode: dict[str, Any] = {key: seed[key] for key in keys}
    # the minutes are the timing model's (set_computed_minutes), never the seed's
    episode.update(teaching_minutes=0, exercise_minutes=0)
    episode["sections"] = {h: {"track": tracks.get(h, seed.get("default_track")), "minutes": 0} for h in weights}
    return episode


def exercise_kinds(name: str) -> dict[str, str]:
    """ "value" or "function" per exercise key of notebook ``name``, from its reference answers."""
    from pp_demo.exercises.solutions import SOLUTIONS

    prefix = name[:2] + "."
    return {key: "function" if callable(a) else "value" for key, a in SOLUTIONS.items() if key.startswith(prefix)}


def computed_minutes(nb: Any, name: str) -> dict[str, int]:
    """Each section's minutes from its content (``tools/timing.py``), the exercises from their kinds."""
    authored = nbformat.from_dict({**nb, "cells": _authored(nb)})
    return timing.notebook_minutes(authored, exercise_kinds(name))


def set_computed_minutes(nb: Any, name: str) -> None:
    """The minutes of every section and exercise, from the content; tracks and needs are kept."""
    ep = nb.metadata["episode"]
    minutes = computed_minutes(nb, name)
    for heading, info in ep["sections"].items():
        if heading in minutes:
            info["minutes"] = minutes[heading]
    if isinstance(ep["sections"].get(EXERCISES), dict):
        old = ep["sections"][EXERCISES].get("exercises") or {}
        ep["sections"][EXERCISES]["exercises"] = {
            key: {**(old.get(key) or {}), "minutes": cost}
            for key, cost in timing.exercise_costs(exercise_kinds(name)).items()
        }
    ep["teaching_minutes"] = sum(m for h, m in minutes.items() if h != EXERCISES)
    ep["exercise_minutes"] = minutes.get(EXERCISES, 0)


def problems(nb: Any, name: str = "notebook") -> list[str]:
    """Everything wrong with a notebook's episode metadata, one line each (empty: valid)."""
    ep = nb.metadata.get("episode")
    if not isinstance(ep, dict):
        return [f"{name}: no metadata['episode']"]
    out = []
    if ep.get("track") not in TRACKS:
        out.append(f"{name}: track {ep.get('track')!r} is not one of {TRACKS}")
    for key, low, high in (("questions", 1, 3), ("objectives", 1, 9), ("keypoints", 1, 9)):
        items = ep.get(key)
        if not (isinstance(items, list) and low <= len(items) <= high and all(isinstance(i, str) and i for i in items)):
            out.append(f"{name}: {key} must be a list of {low} to {high} non-empty strings")
    raw = ep.get("sections")
    sections: dict[str, Any] = raw if isinstance(raw, dict) else {}
    headings = list(section_weights(nb))
    if EXERCISES not in headings:
        out.append(f"{name}: no '## {EXERCISES}' section")
    missing, stale = [h for h in headings if h not in sections], [h for h in sections if h not in headings]
    if missing or stale:
        out.append(f"{name}: ## headings not classified: {missing}; sections that are no heading: {stale}")
    for heading, info in sections.items():
        if not (isinstance(info, dict) and info.get("track") in TRACKS and _minutes(info.get("minutes"))):
            out.append(f"{name}: section {heading!r} needs a track in {TRACKS} and whole minutes")
    computed = computed_minutes(nb, name)
    stale_minutes = [
        h for h, info in sections.items() if isinstance(info, dict) and info.get("minutes") != computed.get(h)
    ]
    if not out and stale_minutes:
        out.append(f"{name}: minutes of {stale_minutes} differ from the content's (tools/timing.py): run apply")
    if not out:
        costs = timing.exercise_costs(exercise_kinds(name))
        listed = sections[EXERCISES].get("exercises") or {}
        if {k: (i or {}).get("minutes") for k, i in listed.items()} != costs:
            out.append(f"{name}: exercises listed {sorted(listed)}, the checkers' {sorted(costs)}: run apply")
        out += needs.problems(ep, headings, name)
    if not out:
        teaching = sum(info["minutes"] for h, info in sections.items() if h != EXERCISES)
        for key, want in (("teaching_minutes", teaching), ("exercise_minutes", sections[EXERCISES]["minutes"])):
            if ep.get(key) != want:
                out.append(f"{name}: {key} is {ep.get(key)!r}, its sections add up to {want}")
    return out


def _minutes(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _bullets(items: list[str]) -> str:
    # a failure condition is written {fails: RULE vs REFERENCE}: the tested sentence is shown
    return "\n".join(f"- {render_failures(item)}" for item in items)


# ColossalAI is no attendee's homework (native Windows cannot install it): a notebook whose code
# imports it says, in its header, how to follow without it.
IMPORTS_COLOSSALAI = re.compile(r"^\s*(import|from) colossalai\b|\bcolossalai_forwards?\(", flags=re.M)
WITHOUT_COLOSSALAI = (
    "**Without ColossalAI** (no attendee's homework; native Windows cannot install it) the cell that "
    "imports it stops with one line saying how to install it, and each later cell that needs it says "
    "the same: read their stored outputs here or on the read-only site "
    "(`make site`), or follow the instructor's demo; `make colossalai` (Linux, macOS, WSL2) runs them."
)


def imports_colossalai(nb: Any) -> bool:
    return any(c.cell_type == "code" and IMPORTS_COLOSSALAI.search(c.source) for c in nb.cells)


def render_header(ep: dict[str, Any], order: list[str], colossalai: bool = False) -> str:
    """The overview cell; ``order``: the section headings in notebook order (JSON sorts keys);
    ``colossalai``: the notebook imports it (``imports_colossalai``)."""
    optional = [h for h in order if ep["sections"][h]["track"] == "optional"]
    track = "core" if ep["track"] == "core" else "optional (not on the core path)"
    lines = [
        f"**Episode** · {track} · teaching {ep['teaching_minutes']} min · exercises {ep['exercise_minutes']} min",
        "",
        "**Questions**",
        "",
        _bullets(ep["questions"]),
        "",
        "**Objectives**",
        "",
        _bullets(ep["objectives"]),
    ]
    if optional:
        lines += ["", "*Optional sections* (to skip when time is short): " + "; ".join(optional) + "."]
    if colossalai:
        lines += ["", WITHOUT_COLOSSALAI]
    return "\n".join(lines)


def render_keypoints(ep: dict[str, Any]) -> str:
    return "## Key points\n\n" + _bullets(ep["keypoints"])


def _cell(cell_id: str, source: str) -> Any:
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    return cell


def render_into(nb: Any) -> None:
    """Put the two generated cells in place (after the title cell; last), replacing old ones."""
    cells = _authored(nb)
    title = next((i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("# ")), -1)
    ep = nb.metadata["episode"]
    header = render_header(ep, list(section_weights(nb)), imports_colossalai(nb))
    cells.insert(title + 1, _cell(HEADER_ID, header))
    cells.append(_cell(KEYPOINTS_ID, render_keypoints(ep)))
    nb.cells = cells


def generated_cells_problems(nb: Any, name: str) -> list[str]:
    """Whether the two generated cells are where ``render_into`` puts them, with its text."""
    expected = nbformat.from_dict(json.loads(json.dumps(nb)))
    render_into(expected)
    return (
        [] if expected.cells == nb.cells else [f"{name}: header/key-point cells differ from the metadata (run apply)"]
    )


def apply(path: pathlib.Path, seed: dict[str, Any] | None = None) -> bool:
    """Write the metadata (from the seed, if given) and its two cells; True if the file changed."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    if seed is not None:
        nb.metadata["episode"] = from_seed(nb, seed, path.stem)
    if isinstance(nb.metadata.get("episode"), dict) and isinstance(nb.metadata["episode"].get("sections"), dict):
        set_computed_minutes(nb, path.stem)
    found = problems(nb, path.stem)
    if found:
        raise EpisodeError(found[0])
    render_into(nb)
    after: str = nbformat.writes(nb) + "\n"
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


def load_seed(path: pathlib.Path = SEED) -> dict[str, Any]:
    return {k: v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if not k.startswith("_")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.episodes", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("apply", "check", "set"))
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path, help="default: notebooks/[0-9]*.ipynb")
    parser.add_argument("--from-seed", action="store_true", help=f"take the values from {SEED.name}")
    parser.add_argument("--part", help="set: a ## heading, an exercise key, or 'keypoints'")
    parser.add_argument("--track", choices=TRACKS, help="set: the section's track")
    parser.add_argument("--needs", nargs="*", help="set: the ## headings it needs (none: remove them)")
    args = parser.parse_intermixed_args(argv)
    paths = args.notebooks or notebooks()
    try:
        if args.command == "set":
            if len(args.notebooks) != 1 or not args.part:
                raise EpisodeError("set takes one notebook and --part")
            nb = nbformat.read(paths[0], as_version=4)
            needs.set_part(nb.metadata["episode"], args.part, args.track, args.needs)
            set_computed_minutes(nb, paths[0].stem)  # content edited since the last apply is no obstacle
            found = problems(nb, paths[0].stem)
            if found:  # nothing written
                raise EpisodeError(found[0])
            nbformat.write(nb, paths[0])
            apply(paths[0])
            print(f"{paths[0].name}: {args.part} set")
        elif args.command == "apply":
            seeds = load_seed() if args.from_seed else {}
            for path in paths:
                if args.from_seed and path.stem not in seeds:
                    raise EpisodeError(f"{path.stem}: not in {SEED.name}")
                changed = apply(path, seeds.get(path.stem))
                print(f"{path.name}: {'updated' if changed else 'unchanged'}")
                if args.from_seed:  # sections that moved to another notebook, or were renamed
                    headings = section_weights(nbformat.read(path, as_version=4))
                    unused = [h for h in seeds[path.stem]["sections"] if h not in headings]
                    if unused:
                        print(f"  note: seed sections not in {path.name}: {unused}")
        else:
            found = []
            for path in paths:
                nb = nbformat.read(path, as_version=4)
                found += problems(nb, path.stem) or generated_cells_problems(nb, path.stem)
            print("\n".join(found) or f"{len(paths)} notebooks: episode metadata and cells ok")
            return 1 if found else 0
    except (ValueError, OSError, KeyError) as error:  # EpisodeError and JSONDecodeError are ValueErrors
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
