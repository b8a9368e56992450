"""docs/architecture.md's recipe "Add a schedule", followed in a copy of the tree."""

import pytest
from recipe_tree import add, check_against_page, edit, run_pytest

# each recipe runs every notebook in its copy: over a minute on 2 cores
pytestmark = pytest.mark.slow


def test_add_a_schedule_as_the_page_says(tree):
    # torch's looped breadth-first schedule: two stages on each rank, like the interleaved one
    interleaved = '        ScheduleSpec("interleaved-1f1b", "Interleaved1F1B", stages_per_rank=2),\n'
    looped_bfs = '        ScheduleSpec("looped-bfs", "LoopedBFS", stages_per_rank=2),\n'
    edit(tree, "pp_demo/ranks/schedules.py", interleaved, interleaved + looped_bfs)
    edit(tree, "pp_demo/ranks/jobs.py", '"interleaved-1f1b"]', '"interleaved-1f1b", "looped-bfs"]')
    test = "tests/ranks/test_looped.py"
    add(tree, test, "LOOPED: ScheduleInterleaved1F1B", ', "looped-bfs": ScheduleLoopedBFS')
    edit(tree, test, "SCHEDULES.values()] == [1, 1, 2]", "SCHEDULES.values()] == [1, 1, 2, 2]")
    edit(tree, test, "'interleaved-1f1b', got 'zb'", "'interleaved-1f1b', 'looped-bfs', got 'zb'")
    edit(tree, test, "ScheduleInterleaved1F1B\n", "ScheduleInterleaved1F1B, ScheduleLoopedBFS\n")
    ran = run_pytest(tree, "-q", test, "tests/ranks/test_schedules.py", "-m", "not slow", "-k", "not two_ranks")
    assert ran.returncode == 0, ran.stdout[-2000:]
    check_against_page(tree, "Add a schedule")
