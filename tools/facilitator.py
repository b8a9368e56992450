"""docs/facilitator.md, generated: ``python -m tools.guide`` (or ``make guide``).

Everything in the guide is read from somewhere else, so it cannot drift: the schedules and the
episode table from the notebooks' episode metadata; the exercises from the checkers' registry
(``pp_demo.exercises``), whose record of each exercise gives its question, answer, why and common
wrong answers, with the line the checker itself prints for each wrong answer; the set-up email
from ``SETUP_EMAIL`` (as docs/install.md) and the wheelhouse recipe from docs/install.md; the
stuck points from the torch error below and docs/troubleshooting.md. The same command puts the
teaching and exercise minutes into the README's notebook table.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import re
from typing import Any

import nbformat

from pp_demo.pooling.failure import render_failures
from tools import agenda, episodes, install_env, instructor_notes, timing

GUIDE = pathlib.Path("docs") / "facilitator.md"
TIMES = pathlib.Path("results") / "notebook_times.json"
PAGES = ("install", "troubleshooting")  # docs/<page>.md: the wheelhouse recipe, the stuck points
CORE_PATH = "**Core path run time**"
WHEELHOUSE = [
    "make wheelhouse                 # beforehand, with the network: every wheel into wheelhouse/",
    "cp -r wheelhouse /media/usb/    # onto a stick (or a shared folder in the room)",
    "make setup WHEELHOUSE=/media/usb/wheelhouse   # in the room: no index, no network",
    "make doctor",
]


def load(root: pathlib.Path) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(title, episode metadata, section headings in order) for every notebook, in order."""
    out = []
    for path in episodes.notebooks(root):
        nb = nbformat.read(path, as_version=4)
        problems = episodes.problems(nb, path.stem)
        if problems:
            raise episodes.EpisodeError(problems[0])
        title = next((c.source.splitlines()[0][2:] for c in nb.cells if c.source.startswith("# ")), path.stem)
        out.append((title, nb.metadata["episode"], list(episodes.section_weights(nb))))
    return out


def _section(text: str, heading: str) -> str:
    """The body of a README ``## heading`` section (empty if there is none)."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return match.group(1) if match else ""


# The set-up email, one line per platform (docs/install.md says the same; a test keeps them equal).
# Set-up installs and checks, and prints no verdict: `make setup` and the doctor, never `make
# reproduce`, whose last lines give away what notebook 01 lets attendees find.
_VERSIONS = [f"{major}.{minor}" for major, minor in install_env.SUPPORTED_PYTHONS]
_PYTHONS = [f"py -{version}" for version in _VERSIONS]
PYTHON_WORDS = f"{', '.join(_VERSIONS[:-1])} or {_VERSIONS[-1]}"  # "3.11, 3.12 or 3.13"
SETUP_EMAIL = [
    "- **Linux** (x86_64 or aarch64): `make setup`, then `make doctor`",
    "- **macOS 14 or newer on Apple silicon**: `make setup`, then `make doctor` (it runs on the CPU there; "
    "Intel Macs cannot install torch 2.13: see below)",
    "- **macOS whose `python3` is older than 3.11** (Apple's command-line tools ship 3.9): `brew install "
    "python@3.12`, then `make setup PYTHON=python3.12` and `make doctor` (or python.org's Python 3.12 installer, "
    "then the same lines)",
    f"- **Windows 10/11** (x86_64, no `make`): `{_PYTHONS[0]} -m tools.install_env --lock "
    f"constraints\\pinned.lock.txt` (or {', '.join(f'`{p}`' for p in _PYTHONS[1:])}: any supported Python "
    "`py --list` shows), then `.venv\\Scripts\\python -m pp_demo doctor` (or the Linux lines in WSL2)",
    "- **A Linux GPU box** (NVIDIA): `make setup TORCH=cu128`, then `make doctor`",
]
# What `make lab` runs, for Windows without `make`: Lab on the checkout, opening at notebooks/.
WINDOWS_LAB = ".venv\\Scripts\\python -m pp_demo.workshop.lab"  # what make lab runs: the working copy, then Lab
# The error a Linux laptop meets when PyTorch's CPU index is out of its reach (docs/install.md).
TORCH_STUCK = (
    "`setup: no source offers torch==2.13.0+cpu, the CPU build ...`",
    "on Linux the CPU build of torch comes from pip's own sources or PyTorch's CPU index, and this "
    "laptop reached neither (a proxy, a firewall, an offline room). Give a source: "
    "`make setup TORCH_INDEX=<an index with PyTorch's CPU wheels>` or `make setup TORCH_FIND_LINKS=<a "
    "folder holding the wheel>`; on a GPU box `make setup TORCH=cu128`. Do not `pip install torch` by "
    "hand: on Linux that is PyPI's CUDA build, gigabytes of nvidia-* wheels",
)


def setup_lines(install: str) -> list[str]:
    """The set-up email (one line per platform), homework, the fallback, then the wheelhouse."""
    lines = [
        "## Set-up checklist for attendees",
        "",
        "**A week before**, send attendees this, to run in a clone of the repository on the machine "
        f"they will bring (Python {PYTHON_WORDS}, git, about 2 GB free; `docs/install.md` has the details):",
        "",
        *SETUP_EMAIL,
        "",
        "Homework, the same week: `make doctor` (Windows: `.venv\\Scripts\\python -m pp_demo doctor`); send "
        "back its last lines if any says `FAIL` (every `FAIL` line says what to do). ColossalAI is *not* "
        "homework: notebook 06, the only one that imports it, is the instructor's demo, and its stored "
        "outputs show it to everyone else (ColossalAI 0.5.0 cannot be installed on native Windows: its "
        "`setup.py` refuses win32 and points to WSL; docs/install.md).",
        "",
        "**A laptop that cannot install** (Intel Mac, no Python 3.11+, a locked-down machine): build the "
        "read-only site once on a machine that can, `make site`, and share `site/` (open "
        "`site/index.html`): every notebook with its stored outputs and figures, nothing to install.",
        "",
        "**For a room without a reliable network**, bring the environment on a stick. A wheelhouse holds "
        "wheels for one platform and one Python, built on that platform: a mixed room (Linux, macOS, "
        "Windows) takes the read-only site, a shared Linux machine every attendee logs in to (`make lab` "
        "there, its port forwarded with `ssh -L`), or one wheelhouse per platform and Python, each built "
        "where it will be used (Windows laptops: WSL2 with the Linux one). The recipe, from docs/install.md:",
        "",
        *_wheelhouse(install),
        "**On the day**, before the first episode, on every laptop: `make doctor`, then `make lab` (it "
        "prints the URL to open). On Windows: `.venv\\Scripts\\python -m pp_demo doctor`, then "
        f"`{WINDOWS_LAB}` (in the checkout). The instructor's machine (Linux, macOS or "
        "WSL2) adds `make colossalai` for notebook 06's demo.",
        "",
    ]
    return lines


def _wheelhouse(install: str) -> list[str]:
    """The install page's wheelhouse commands (beforehand, then in the room); WHEELHOUSE if it has none."""
    blocks = re.findall(r"```bash\n(.*?)```", install, flags=re.S)
    blocks = [b.rstrip() for b in blocks if "make wheelhouse" in b or "WHEELHOUSE=" in b]
    lines = []
    for block in blocks or ["\n".join(WHEELHOUSE)]:
        lines += ["```bash", block, "```", ""]
    return lines


def stuck_lines(troubleshooting: str) -> list[str]:
    """docs/troubleshooting.md's table, one item per row: what attendees see, and the fix."""
    rows = [line for line in troubleshooting.splitlines() if line.startswith("| ")]
    lines = [
        "## Where attendees get stuck",
        "",
        "From docs/troubleshooting.md (start with `make doctor`):",
        "",
    ]
    symptom, fix = TORCH_STUCK
    lines.append(f"- **{symptom}**  \n  {fix}")
    for row in rows[1:]:  # rows[0] is the header; the separator does not start with "| "
        cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
        if len(cells) == 2 and cells[0] != symptom:  # the README may carry the torch row too
            lines.append(f"- **{cells[0]}**  \n  {cells[1]}")
    return lines + [""]


def _show(value: Any) -> str:
    """``repr``, with a set's items sorted: a set of strings iterates in another order every run."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(repr, value))) + "}" if value else "set()"
    return repr(value)


def _answer_lines(answer: Any) -> list[str]:
    """The reference answer as a list item: a value or a lambda inline, a function as a code block."""
    if not inspect.isfunction(answer):
        return [f"- Answer: `{_show(answer)}`"]
    source = inspect.getsource(answer)
    if answer.__name__ == "<lambda>":
        return ["- Answer: `" + source[source.index("lambda") :].split("#")[0].strip().rstrip(",") + "`"]
    code = [ln for ln in source.rstrip().splitlines() if not ln.strip().startswith("#")]
    return ["- Answer:", "", "  ```python", *(f"  {ln}" for ln in code), "  ```", ""]


def exercise_lines(titles: list[str]) -> list[str]:
    from pp_demo.exercises import EXERCISES, status

    lines = [
        "## The exercises: answers, why, and the common wrong answers",
        "",
        "Each wrong answer comes with the line the checker prints for it (so you see what the "
        "attendee sees) and the misconception it points at.",
        "",
    ]
    for title in titles:
        keys = sorted(key for key in EXERCISES if key.startswith(title[:2] + "."))
        if keys:
            lines += [f"### {title}", ""]
        for key in keys:
            exercise = EXERCISES[key]
            lines += [
                f"**{key}.** {exercise.question}",
                "",
                *_answer_lines(exercise.solution),
                f"- Why: {exercise.why}",
            ]
            for wrong in exercise.wrong_answers:
                label = wrong.shown or f"`{_show(wrong.answer)}`"
                shown = status(key, wrong.answer)
                lines.append(f"- Wrong: {label}. The checker prints `[{key}] {shown}`. Reveals: {wrong.reveals}.")
            if exercise.debrief:
                lines.append(f"- Debrief (in the room): {exercise.debrief}.")
            lines.append("")
    return lines


def _times(root: pathlib.Path) -> dict[str, Any]:
    path = root / TIMES
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def core_path_line(root: pathlib.Path) -> str:
    times = _times(root)
    if "core_path_seconds" not in times:
        return f"{CORE_PATH}: not measured yet (`make time-core`)."
    names = ", ".join(times["notebooks"])
    return (
        f"{CORE_PATH}: the core notebooks ({names}), each in a fresh kernel, took "
        f"{times['core_path_seconds']:.0f} s in all on {times['cores']} CPU cores (the goal: under 60 s) "
        f"(`{times['command']}`, recorded in `{TIMES.as_posix()}`)."
    )


def guide(root: pathlib.Path) -> str:
    eps = load(root)
    install, troubleshooting = ((root / "docs" / f"{page}.md").read_text(encoding="utf-8") for page in PAGES)
    lines = [
        "# Facilitator guide",
        "",
        "Generated by `make guide` (`python -m tools.guide`) from the notebooks' episode "
        "metadata, the exercise checkers, the README and docs/: edit those, not this file.",
        "",
        "## The episodes",
        "",
        "| notebook | track | teaching | exercises | questions |",
        "|---|---|---|---|---|",
    ]
    for title, ep, _ in eps:
        lines.append(
            f"| {title} | {ep['track']} | {ep['teaching_minutes']} min | {ep['exercise_minutes']} min | "
            + " ".join(ep["questions"])
            + " |"
        )
    lines += ["", core_path_line(root), ""]
    lines += [f"Minutes are computed from each notebook's content ({timing.CONSTANTS_TEXT}).", ""]
    for fmt in agenda.FORMATS:
        items = agenda.plan(fmt, eps)
        lines += [f"## Schedule: {fmt.title}", "", *agenda.table(items), "", agenda.summary(fmt, items), ""]
        lines += ["**The wrap-up's key points** (those whose sections this plan teaches):", ""]
        for title, kept, dropped in agenda.wrap_up_points(fmt, eps):
            lines += [f"- {title}: " + " ".join(render_failures(p) for p in kept)]
            if dropped:
                lines[-1] += f" *Not in this plan (its sections are skipped):* {len(dropped)} more."
        lines += ["", "**The instructor's notes for this plan** (only the sections it teaches):", ""]
        for take in fmt.takes:
            title, ep, order = agenda.find(eps, take.number)
            if take.sections == "demo":
                lines += [f"*{title}* (demo): run its main result and read the printed lines.", ""]
                continue
            sections, in_room = agenda.taken(take, ep, order)
            minutes = {key: info["minutes"] for key, info in agenda.exercises_of(ep).items()}
            lines += [f"*{title}*", "", *instructor_notes.take_notes(take.number, sections, in_room, minutes), ""]
    lines += instructor_notes.room_lines()
    lines += setup_lines(install) + stuck_lines(troubleshooting) + exercise_lines([t for t, _, _ in eps])
    lines += ["## Key points, per episode", ""]
    for title, ep, _ in eps:
        lines += [f"**{title}**", "", *(f"- {render_failures(point)}" for point in ep["keypoints"]), ""]
    return "\n".join(lines).rstrip() + "\n"


def readme_with_minutes(
    readme: str, eps: list[tuple[str, dict[str, Any], list[str]]], names: list[str], root: pathlib.Path
) -> str:
    """The README with teaching and exercise minutes in its notebook table, and the core path's time."""
    by_name = dict(zip(names, eps, strict=True))
    out: list[str] = []
    after_table = False
    for line in readme.splitlines():
        if after_table and (not line.strip() or line.startswith(CORE_PATH)):
            continue  # the blank lines and the core-path line written last time
        after_table = False
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if line.startswith("| ") else []
        if cells and cells[0] == "notebook" and "what it teaches" in cells[1]:
            line = "| notebook | what it teaches | teaching | exercises | " + cells[-1] + " |"
        elif line.startswith("|-") and out and out[-1].startswith("| notebook | what it teaches"):
            line = "|---|---|---|---|---|"
        elif cells and cells[0].strip("`") in by_name:
            ep = by_name[cells[0].strip("`")][1]
            line = (
                f"| {cells[0]} | {cells[1]} | {ep['teaching_minutes']} min | {ep['exercise_minutes']} min | "
                f"{cells[-1]} |"
            )
        out.append(line)
        if cells and cells[0].strip("`") == names[-1]:
            out += ["", core_path_line(root), ""]
            after_table = True
    return "\n".join(out) + "\n"


def write_all(root: pathlib.Path) -> list[pathlib.Path]:
    """Write docs/facilitator.md and update the README's notebook table; returns the files written."""
    guide_path, readme_path = root / GUIDE, root / "README.md"
    guide_path.parent.mkdir(exist_ok=True)
    guide_path.write_text(guide(root), encoding="utf-8")
    names = [p.name for p in episodes.notebooks(root)]
    readme = readme_path.read_text(encoding="utf-8")
    readme_path.write_text(readme_with_minutes(readme, load(root), names, root), encoding="utf-8")
    return [guide_path, readme_path]
