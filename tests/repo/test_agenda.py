"""The workshop plans (tools/agenda.py) against the clock, the breaks and what each section needs.

The minutes are the notebooks' own (their episode metadata, computed from their content), so
these tests hold for whatever headings the notebooks have: a plan that no longer fits, a break
that slips past its hour, a cut that would leave a kept section without what it needs, fails.
"""

import copy
import pathlib

import nbformat
import pytest

from tools import agenda, episodes, facilitator, instructor_notes, needs, timing

ROOT = pathlib.Path(__file__).resolve().parents[2]
EPISODES = facilitator.load(ROOT)
THREE_HOURS = next(f for f in agenda.FORMATS if f.title == "3 hours")
BY_TITLE = {f.title: f for f in agenda.FORMATS}


def _taken(fmt):
    """(number, episode metadata, sections, exercises) of each notebook a plan teaches (not demos)."""
    out = []
    for take in fmt.takes:
        _, ep, order = agenda.find(EPISODES, take.number)
        if take.sections != "demo":
            out.append((take.number, ep, *agenda.taken(take, ep, order)))
    return out


@pytest.mark.parametrize("fmt", agenda.FORMATS, ids=[f.title for f in agenda.FORMATS])
def test_each_plan_fits_its_time_less_its_reserve_with_every_break_by_its_hour(fmt):
    items = agenda.plan(fmt, EPISODES)
    assert agenda.total_minutes(items) <= fmt.budget - fmt.reserve, agenda.summary(fmt, items)
    assert [i for i in items if i.is_break] == fmt.breaks
    for start, item in zip(agenda.starts(items), items, strict=True):
        if item.is_break:
            assert start <= item.latest, f"{fmt.title}: {item.what} starts at {agenda.clock(start)}"
    assert fmt.opening.minutes >= 10  # welcome and set-up: a room never starts on time
    assert agenda.table(items)[-1].startswith(f"| {agenda.clock(agenda.total_minutes(items))} |")


def test_the_three_hour_plan_fits_150_minutes_of_content_two_breaks_and_four_exercises_in_the_room():
    items = agenda.plan(THREE_HOURS, EPISODES)
    starts = agenda.starts(items)
    assert THREE_HOURS.budget == 180 and THREE_HOURS.reserve == 10 and items[0].minutes == 10
    assert agenda.content_minutes(THREE_HOURS, items) <= 150, agenda.summary(THREE_HOURS, items)
    assert agenda.total_minutes(items) <= 170
    breaks = [(start, item) for start, item in zip(starts, items, strict=True) if item.is_break]
    assert len(breaks) == 2 and breaks[0][0] <= 70  # the first by 1:10
    first_end = breaks[0][0] + breaks[0][1].minutes
    assert 45 <= breaks[1][0] - first_end <= 75  # the second about an hour of teaching later
    in_room = [key for _, _, _, exercises in _taken(THREE_HOURS) for key in exercises]
    assert {"01.3", "02.1", "03.1", "05.1"} <= set(in_room) and len(in_room) >= 4
    # spread over the plan: one per notebook taught, each 5-8 minutes with its debrief
    assert len({key[:2] for key in in_room}) == len(in_room)
    _, ep, _ = agenda.find(EPISODES, "01")
    for number, ep, _, exercises in _taken(THREE_HOURS):
        assert all(5 <= agenda.exercises_of(ep)[k]["minutes"] <= 8 for k in exercises), number


def test_the_three_hour_plan_teaches_the_rooms_notebooks_whole_in_order():
    core_path = [title[:2] for title, ep, _ in EPISODES if ep["track"] == "core"]
    assert core_path == list(agenda.ROOM_NOTEBOOKS) == ["01", "02", "03", "05"]
    assert [(t.number, t.sections) for t in THREE_HOURS.takes] == [(n, "all") for n in core_path]
    for number, ep, sections, _ in _taken(THREE_HOURS):
        # every ## section of the notebook, in order: nothing left for an instructor to skip
        _, _, order = agenda.find(EPISODES, number)
        assert sections == [h for h in order if h != agenda.EXERCISES], number
        assert all(info["track"] == "core" for info in ep["sections"].values()), number


def test_no_stretch_of_the_three_hour_plan_between_breaks_runs_over_an_hour():
    items = agenda.plan(THREE_HOURS, EPISODES)
    stretches, now = [], 0
    for item in items:
        if item.is_break:
            stretches.append(now)
            now = 0
        else:
            now += item.minutes
    stretches.append(now)
    assert len(stretches) == 3 and max(stretches) <= agenda.ROOM_STRETCH == 60, stretches


def test_the_day_plan_takes_the_rooms_notebooks_first_then_the_days_own():
    day = BY_TITLE["a full day"]
    taught = [t.number for t in day.takes if t.sections != "demo"]
    assert taught[: len(agenda.ROOM_NOTEBOOKS)] == list(agenda.ROOM_NOTEBOOKS)
    assert all(number not in agenda.ROOM_NOTEBOOKS for number in taught[len(agenda.ROOM_NOTEBOOKS) :])


@pytest.mark.parametrize("fmt", agenda.FORMATS, ids=[f.title for f in agenda.FORMATS])
def test_the_wrap_up_takes_no_key_point_whose_sections_the_plan_skips(fmt):
    for number, ep, sections, _ in _taken(fmt):
        kept, dropped = agenda.keypoints(ep, sections)
        needed = ep.get("keypoint_needs") or {}
        for point in kept:
            for heading in needed.get(str(ep["keypoints"].index(point) + 1), []):
                assert heading in sections, (fmt.title, number, point)
        assert len(kept) + len(dropped) == len(ep["keypoints"])


def test_the_three_hour_wrap_up_takes_every_key_point_of_the_notebooks_it_teaches():
    for title, kept, dropped in agenda.wrap_up_points(THREE_HOURS, EPISODES):
        assert kept and not dropped, title
    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    assert "The wrap-up's key points" in guide.split("## Schedule: 3 hours")[1].split("## Schedule:")[0]


@pytest.mark.parametrize("fmt", agenda.FORMATS, ids=[f.title for f in agenda.FORMATS])
def test_no_plan_leaves_out_a_section_that_something_it_keeps_needs(fmt):
    for number, ep, sections, exercises in _taken(fmt):
        assert agenda.unmet_needs(ep, sections, exercises) == [], (fmt.title, number)


def test_a_plan_takes_each_notebook_at_the_minutes_its_content_costs():
    for fmt in agenda.FORMATS:
        for take, item in zip(fmt.takes, agenda.episode_items(fmt, EPISODES), strict=True):
            if take.sections == "demo":
                assert item.minutes == take.minutes
                continue
            title, ep, order = agenda.find(EPISODES, take.number)
            path = next((ROOT / "notebooks").glob(f"{take.number}_*.ipynb"))
            computed = episodes.computed_minutes(nbformat.read(path, as_version=4), path.stem)
            sections, exercises = agenda.taken(take, ep, order)
            costs = timing.exercise_costs({k: episodes.exercise_kinds(path.stem)[k] for k in exercises})
            extra = timing.notebook_minutes_extra()  # switching to it, its key points
            assert item.minutes == sum(computed[h] for h in sections) + sum(costs.values()) + extra, (fmt.title, title)


# Dependencies the notebooks are known to have, by a fragment of each heading (headings get
# reworded): where the material moves, drop the line here and the metadata's needs with it.
KNOWN_NEEDS = [
    ("04", "pad == eos", "-1"),  # the pad == eos section leans on the -1 wrap
    ("12", "keypoint:2", "Other split points"),  # "not to the split point"
    ("13", "keypoint:2", "mechanism"),  # "what a pad position computes"
    ("13", "keypoint:1", "Ten seeds"),
    ("13", "Ten seeds", "mechanism"),  # the ten-seed table shows runs that section explains
    ("13", "Ten seeds", "first-pad rule on a pad == eos"),
    ("11", "keypoint:3", "training steps"),  # "only floating-point tensors get a gradient back"
    ("11", "keypoint:4", "Your own DeepSpeed pipeline"),  # "check --engine deepspeed"
    ("06", "06.2", "sdpa"),
    ("06", "06.3", "sdpa"),
]


def _heading(ep, fragment):
    found = [h for h in ep["sections"] if fragment.lower() in h.lower()]
    assert len(found) == 1, f"no single heading holds {fragment!r} (renamed?): {list(ep['sections'])}"
    return found[0]


@pytest.mark.parametrize("number, part, needed", KNOWN_NEEDS)
def test_the_known_dependencies_are_recorded(number, part, needed):
    _, ep, _ = agenda.find(EPISODES, number)
    exercises = agenda.exercises_of(ep)
    if part.startswith(needs.ONE_KEYPOINT):
        owner = {"needs": (ep.get("keypoint_needs") or {}).get(part[len(needs.ONE_KEYPOINT) :], [])}
    elif part == needs.KEYPOINTS:
        owner = ep
    elif part in exercises:
        owner = exercises[part]
    else:
        owner = ep["sections"][_heading(ep, part)]
    assert _heading(ep, needed) in owner.get("needs", []), (number, part)


def test_the_notes_under_each_plan_name_only_what_that_plan_teaches():
    guide = (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")
    for fmt in agenda.FORMATS:
        block = guide.split(f"## Schedule: {fmt.title}\n", 1)[1].split("\n## ", 1)[0]
        notes = block.split("**The instructor's notes for this plan**", 1)[1]
        for number, ep, sections, exercises in _taken(fmt):
            title = agenda.find(EPISODES, number)[0]
            mine = notes.split(f"*{title}*\n", 1)[1].split("\n\n*", 1)[0]
            # a note is shown with the section it happens in: each must be one this plan teaches
            for heading in ep["sections"]:
                if heading not in sections and heading != agenda.EXERCISES:
                    assert f"({heading})" not in mine, (fmt.title, number, heading)
            told_home = [k for k in exercises if f"exercise {k} (" in mine.split("When late", 1)[-1]]
            assert told_home == exercises, (fmt.title, number)  # the cut is the plan's own exercises
            assert all(k in exercises for k in agenda.exercises_of(ep) if f"send exercise {k}" in mine)


def test_the_notes_are_written_for_sections_that_exist():
    for number, notes in instructor_notes.EPISODES.items():
        _, ep, _ = agenda.find(EPISODES, number)
        for heading, _ in (*notes.live_code, *notes.run):
            assert heading in ep["sections"], (number, heading)


# ---- the machinery on a made-up notebook


def _ep(**sections):
    return {
        "needs": [],
        "sections": {h: {"track": t, "minutes": 5, **({"needs": n} if n else {})} for h, (t, n) in sections.items()}
        | {"Exercises": {"track": "core", "minutes": 6, "exercises": {"99.1": {"minutes": 6, "needs": ["B"]}}}},
    }


def test_unmet_needs_names_the_needer_and_the_section_left_out():
    ep = _ep(A=("core", ["B"]), B=("optional", None))
    order = ["A", "B", "Exercises"]
    core = agenda.taken(agenda.Take("99", "core"), ep, order)
    assert core == (["A"], ["99.1"])
    assert agenda.unmet_needs(ep, *core) == ["section 'A' needs 'B'", "exercise 99.1 needs 'B'"]
    assert agenda.unmet_needs(ep, ["A", "B"], ["99.1"]) == []
    assert agenda.taken(agenda.Take("99", "core", ()), ep, order) == (["A"], [])
    with pytest.raises(KeyError, match="99.7"):
        agenda.taken(agenda.Take("99", "core", ("99.7",)), ep, order)


def test_a_break_goes_before_the_block_that_would_pass_its_latest_start():
    fmt = agenda.Format(
        "t", 100, 0, agenda.Item(10, "welcome"), (), [agenda.Item(30, "x"), agenda.Item(30, "y")],
        [agenda.Item(10, "Break", True, latest=45)], agenda.Item(5, "end"),
    )  # fmt: skip
    items = agenda.plan(fmt, [])
    assert [i.what for i in items] == ["welcome", "x", "Break", "y", "end"]  # 10 + 30 = 40 <= 45 < 70


def test_needs_naming_no_heading_or_itself_is_a_problem_and_set_part_edits_one_part():
    ep = _ep(A=("core", ["Gone"]), B=("core", ["B"]))
    found = needs.problems(ep, ["A", "B", "Exercises"], "99")
    assert found == [
        "99: section 'A' needs ['Gone'], which is no other ## heading of the notebook",
        "99: section 'B' needs ['B'], which is no other ## heading of the notebook",
    ]
    edited = copy.deepcopy(ep)
    needs.set_part(edited, "A", "optional", [])
    needs.set_part(edited, "99.1", None, ["A"])
    needs.set_part(edited, needs.KEYPOINTS, None, ["B"])
    assert edited["sections"]["A"] == {"track": "optional", "minutes": 5}
    assert edited["sections"]["Exercises"]["exercises"]["99.1"]["needs"] == ["A"] and edited["needs"] == ["B"]
    for part, track in (("Nope", None), ("99.1", "core")):
        with pytest.raises(ValueError, match="Nope|only a section"):
            needs.set_part(edited, part, track, None)
