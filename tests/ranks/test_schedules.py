"""The per-rank order of GPipe and 1F1B, written from the schedules' definitions."""

import pytest
import torch

from pp_demo.ranks.jobs import Job
from pp_demo.ranks.schedules import schedule_order


def test_gpipe_runs_every_forward_then_every_backward_on_every_stage():
    assert schedule_order("gpipe", 3, 2) == [["F0", "F1", "B0", "B1"]] * 3


def test_1f1b_on_three_stages_warms_up_p_minus_s_forwards_then_alternates():
    assert schedule_order("1f1b", 3, 4) == [
        ["F0", "F1", "F2", "B0", "F3", "B1", "B2", "B3"],
        ["F0", "F1", "B0", "F2", "B1", "F3", "B2", "B3"],
        ["F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3"],
    ]


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p, m", [(2, 2), (3, 3), (4, 8)])
def test_each_micro_batch_is_run_forward_once_and_backward_once_after_it(kind, p, m):
    for ops in schedule_order(kind, p, m):
        assert sorted(ops) == sorted([f"F{i}" for i in range(m)] + [f"B{i}" for i in range(m)])
        assert all(ops.index(f"F{i}") < ops.index(f"B{i}") for i in range(m))


def test_1f1b_with_fewer_micro_batches_than_stages_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"1F1B needs at least one micro-batch per stage \(3\), got 2"):
        schedule_order("1f1b", 3, 2)


def test_a_job_trains_with_1f1b_when_each_stage_has_a_micro_batch_and_gpipe_otherwise():
    ids = torch.ones(6, 4, dtype=torch.long)
    step = Job.step(None, ids, ids, torch.zeros(6, dtype=torch.long), n_micro=2)
    assert (step.schedule_for(2), step.schedule_for(3)) == ("1f1b", "gpipe")
    assert Job.infer(None, ids, ids, n_micro=3).schedule_for(3) == "gpipe"
