"""A looped schedule as an argument: ``schedule="interleaved-1f1b"`` runs 4 stages on 2 gloo
ranks (torch's ``ScheduleInterleaved1F1B``, rank 0 holding stages 0 and 2, rank 1 stages 1
and 3), with the logits of ``model.forward`` and the gradients of one process. All the cases
share one start of the two ranks."""

import os
import pathlib
import subprocess
import sys
import typing

import pytest
import torch
from helpers import one_process_step as _one_process_step
from review_table import COUNT_RULE_MATCHES_SIX, SIX_ROWS
from torch.distributed.pipelining import Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B
from torch.distributed.pipelining.schedules import get_schedule_class

from pp_demo.core import as_batch, build_model
from pp_demo.ranks.jobs import Fault, Inference, Job, Schedule, Step, Training, prepare
from pp_demo.ranks.runner import run
from pp_demo.ranks.schedules import SCHEDULES, get_schedule, stage_ids_of_rank
from pp_demo.training.loop import fresh_model, make_batches
from pp_demo.verify.compare import forward_logits
from pp_demo.verify.tolerances import tolerance

LOOPED = "interleaved-1f1b"
FOUR_STAGES = (1, 2, 3)  # the tiny models have 4 layers: one a stage, two stages a rank
LABELS = torch.tensor([0, 1, 2, 0, 1, 2])
FAMILIES = ["llama", "opt"]  # OPT also zeroes its learned positions after the first stage
MICRO = [2, 3, 6]  # 6 on 2 ranks: three rounds, where two stages of a rank each finish backwards


def _jobs():
    ids, mask = as_batch(SIX_ROWS)
    jobs = {}
    for family in FAMILIES:
        model = build_model(family)
        options = dict(split_points=FOUR_STAGES, schedule=LOOPED)
        jobs[family, "infer"] = Job.infer(model, ids, mask, n_micro=2, **options)
        jobs[family, "count"] = Job.infer(model, ids, mask, rule="count", n_micro=3, **options)
        for m in MICRO:
            jobs[family, "step", m] = Job.step(model, ids, mask, LABELS, n_micro=m, **options)
    jobs["train"] = Job.train(fresh_model(), make_batches(3, batch_size=8, seed=0), n_micro=4, schedule=LOOPED)
    return jobs


@pytest.fixture(scope="module")
def runs():
    jobs = _jobs()
    results = run(jobs.values(), on="ranks", timeout_s=300)  # every job: 4 stages, 2 ranks, one start
    return {key: (job, result) for (key, job), result in zip(jobs.items(), results, strict=True)}


def _max_diff(a, b):
    return float((a - b).abs().max())


@pytest.mark.distributed
@pytest.mark.parametrize("family", FAMILIES)
def test_interleaved_logits_on_two_ranks_equal_model_forward(runs, family):
    job, result = runs[family, "infer"]
    assert isinstance(result, Inference)
    reference = forward_logits(job.model, job.batch.input_ids, job.batch.attention_mask)
    assert result.logits.shape == reference.shape
    assert _max_diff(result.logits, reference) <= tolerance(result.device)


@pytest.mark.distributed
@pytest.mark.parametrize("family", FAMILIES)
def test_interleaved_count_rule_misses_the_rows_of_the_review_table(runs, family):
    job, result = runs[family, "count"]
    reference = forward_logits(job.model, job.batch.input_ids, job.batch.attention_mask)
    assert ((result.logits - reference).abs().amax(-1) <= tolerance(result.device)).tolist() == COUNT_RULE_MATCHES_SIX


@pytest.mark.distributed
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("m", MICRO)
def test_interleaved_step_gives_the_loss_and_gradients_of_one_process(runs, family, m):
    job, result = runs[family, "step", m]
    assert isinstance(result, Step)
    loss, grads = _one_process_step(job.model, *job.batch.as_tuple())
    assert abs(result.loss - loss) <= tolerance(result.device)
    assert set(result.grads) == set(grads)  # the embedding included, though two stages hold it
    assert max(_max_diff(result.grads[name], grads[name]) for name in grads) <= tolerance(result.device)


@pytest.mark.distributed
def test_interleaved_training_equals_training_in_one_process(runs):
    job, result = runs["train"]
    assert isinstance(result, Training)
    local = run([Job.train(fresh_model(), job.batches, n_micro=4)], on="process")[0]
    assert max(abs(a - b) for a, b in zip(result.losses, local.losses, strict=True)) <= 1e-5
    assert set(result.params) == set(local.params)
    assert max(_max_diff(result.params[n], local.params[n]) for n in local.params) <= 1e-5


# ---------------------------------------------------------------- without ranks


def test_each_name_resolves_to_torchs_class_by_torchs_own_registry():
    classes = {name: get_schedule_class(spec.torch_name) for name, spec in SCHEDULES.items()}
    assert classes == {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B, LOOPED: ScheduleInterleaved1F1B}
    assert [spec.stages_per_rank for spec in SCHEDULES.values()] == [1, 1, 2]


def test_the_names_a_job_accepts_are_the_registrys():
    assert typing.get_args(Schedule) == tuple(SCHEDULES)


def test_an_unknown_schedule_name_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="a schedule is one of 'gpipe', '1f1b', 'interleaved-1f1b', got 'zb'"):
        get_schedule("zb")
    ids, mask = as_batch(SIX_ROWS)
    with pytest.raises(ValueError, match="got 'zb'"):
        run([Job.infer(build_model("llama"), ids, mask, schedule="zb")], on="ranks")


def test_looped_placement_puts_the_first_stage_on_rank_0_and_the_last_on_the_last_rank():
    assert [stage_ids_of_rank(r, 2, 2) for r in range(2)] == [(0, 2), (1, 3)]
    assert [stage_ids_of_rank(r, 3, 2) for r in range(3)] == [(0, 3), (1, 4), (2, 5)]
    assert [stage_ids_of_rank(r, 3, 1) for r in range(3)] == [(0,), (1,), (2,)]  # GPipe, 1F1B


def test_a_looped_job_without_points_is_cut_for_two_ranks_and_under_torchrun_for_its_ranks():
    ids, mask = as_batch(SIX_ROWS)
    model = build_model("llama")
    assert prepare(Job.infer(model, ids, mask, schedule=LOOPED)).split_points == (1, 2, 3)
    assert prepare(Job.infer(model, ids, mask, schedule=LOOPED), n_ranks=2).split_points == (1, 2, 3)
    with pytest.raises(ValueError, match="torchrun started 3 ranks, 2 stages each, but a model with 4 layers"):
        prepare(Job.infer(model, ids, mask, schedule=LOOPED), n_ranks=3)
    with pytest.raises(
        ValueError, match=r"4 stages, 2 on each rank, but torchrun started 1 ranks \(use --nproc-per-node 2\)"
    ):
        prepare(Job.infer(model, ids, mask, schedule=LOOPED, split_points=FOUR_STAGES), n_ranks=1)


@pytest.mark.parametrize(
    "options, message",
    [
        (
            dict(split_points=(1, 3)),
            "holds 2 stages on each of at least 2 ranks: the model needs 4, 6, ... stages, got 3",
        ),
        (dict(split_points=2), "got 2"),
        (dict(split_points=FOUR_STAGES, n_micro=5, batch=10), "5 micro-batches in 2 equal rounds"),
        (dict(split_points=FOUR_STAGES, fault=Fault(rank=2)), r"a fault needs a rank in 0\.\.1"),
    ],
)
def test_a_looped_job_the_engine_cannot_run_is_refused_before_any_rank_starts(options, message):
    rows = options.pop("batch", 6)
    ids, mask = as_batch((SIX_ROWS * 2)[:rows])
    labels = torch.arange(rows) % 3
    with pytest.raises(ValueError, match=message):
        run([Job.step(build_model("llama"), ids, mask, labels, schedule=LOOPED, **options)], on="ranks")


def test_a_looped_job_keeps_its_schedule_for_inference_and_with_few_micro_batches():
    ids = torch.ones(6, 4, dtype=torch.long)
    assert Job.infer(None, ids, ids, schedule=LOOPED).schedule_for(4) == LOOPED
    assert Job.step(None, ids, ids, torch.zeros(6, dtype=torch.long), schedule=LOOPED).schedule_for(4) == LOOPED


_TORCHRUN_SCRIPT = """
import torch
from review_table import SIX_ROWS
from pp_demo.core import build_model
from pp_demo.ranks.jobs import Job
from pp_demo.ranks.runner import run
from pp_demo.core import as_batch
from pp_demo.verify.compare import forward_logits

ids, mask = as_batch(SIX_ROWS)
model = build_model("llama")
results = run([Job.infer(model, ids, mask, n_micro=2, schedule="interleaved-1f1b")], on="ranks")
if results is not None:  # the last rank
    diff = float((results[0].logits - forward_logits(model, ids, mask)).abs().max())
    print(f"device {results[0].device} max diff {diff}")
"""


@pytest.mark.distributed
def test_torchruns_two_ranks_run_a_looped_job_without_points_exactly(tmp_path):
    # two stages on each of torchrun's ranks: the job is cut into four
    script = tmp_path / "looped.py"
    script.write_text(_TORCHRUN_SCRIPT)
    tests = pathlib.Path(__file__).resolve().parents[1]  # review_table lives there
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(tests)])}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [line for line in done.stdout.splitlines() if "max diff" in line]
    assert line.startswith("device cpu max diff ")
    assert float(line.split()[-1]) <= tolerance("cpu")
