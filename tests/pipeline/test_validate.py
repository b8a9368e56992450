"""Job and run refuse bad input in one line (``BadInput``) before anything is built or started.

Each case is an input that once failed far from its cause: 1-D ids as an
IndexError in modeling_llama, float ids in the embedding, ids past the vocabulary as ``index
out of range`` (on ranks, ``rank 0 failed``), ids as a list as an AttributeError, zero rows as
``cannot reshape``, labels past the class count as an IndexError, ``timeout_s=-5`` as "did not
finish within -5 s", a fault past the micro-batches as logits that came back.
"""

import subprocess
import sys
import textwrap

import pytest
import torch
from review_table import SIX_ROWS

from pp_demo import run
from pp_demo.errors import BadInput
from pp_demo.pipeline.families import build_model
from pp_demo.pipeline.jobs import Batch, Fault, Job
from pp_demo.pooling.cases import as_batch

IDS, MASK = as_batch(SIX_ROWS)
LABELS = torch.tensor([0, 1, 0, 1, 0, 1])


@pytest.fixture(scope="module")
def model():
    return build_model("llama")


def _refusal(call, *fragments):
    """``call()`` raises BadInput with one line holding every fragment."""
    with pytest.raises(BadInput) as refused:
        call()
    message = str(refused.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_single_job_instead_of_a_list(model):
    _refusal(lambda: run(Job.infer(model, IDS, MASK)), "run takes a list of jobs", "run([job])")


@pytest.mark.parametrize(
    "ids, mask, expected",
    [
        (IDS[0], MASK[0], ["input_ids must be 2-D", "shape (6,)", "ids[None]"]),
        (IDS.float(), MASK, ["input_ids must hold integers", "torch.float32"]),
        (IDS.tolist(), MASK, ["input_ids must be a torch.Tensor, got list"]),
        (IDS[:0], MASK[:0], ["input_ids has no token", "shape (0, 6)"]),
        (IDS[:, :0], MASK[:, :0], ["input_ids has no token", "shape (6, 0)"]),
        (IDS + 10**6, MASK, ["input_ids must lie in 0..", "(the vocabulary)"]),
        (-IDS - 1, MASK, ["input_ids must lie in 0.."]),
        (IDS, MASK[:, 1:], ["attention_mask of the shape of its input_ids (6, 6), got (6, 5)"]),
        (IDS, MASK * 2, ["attention_mask holds only 0 (padding) and 1"]),
        (IDS, None, ["attention_mask", "None cannot travel"]),
    ],
    ids=[
        "1-D",
        "float",
        "list",
        "no rows",
        "no columns",
        "past vocab",
        "negative",
        "mask shape",
        "mask 0/2",
        "no mask",
    ],
)
@pytest.mark.parametrize("on", ["process", "ranks"])
def test_ids_and_mask_are_checked_before_any_work(model, ids, mask, expected, on):
    # on="ranks" is refused before a process starts: the check costs no rank start
    _refusal(lambda: run([Job.infer(model, ids, mask)], on=on), *expected)


def test_the_vocabulary_bound_is_the_models(model):
    vocab = model.config.vocab_size
    ids = IDS.clone()
    ids[0, -1] = vocab
    _refusal(lambda: run([Job.infer(model, ids, MASK)]), f"0..{vocab - 1}", f"to {vocab}")
    ids[0, -1] = vocab - 1  # the last id of the vocabulary is fine
    assert run([Job.infer(model, ids, MASK)])[0].logits.shape == (6, model.config.num_labels)


@pytest.mark.parametrize(
    "labels, expected",
    [
        (torch.tensor([0, 1, 0, 1, 0, 9]), ["labels must lie in 0..", "num_labels"]),
        (torch.tensor([0, 1, 0, 1, 0, -1]), ["labels must lie in 0.."]),
        (LABELS.float(), ["labels must hold integers", "torch.float32"]),
        (LABELS[:5], ["one label per row: 6 rows, 5 labels"]),
    ],
    ids=["past num_labels", "negative", "float", "too few"],
)
def test_labels_are_checked(model, labels, expected):
    _refusal(lambda: run([Job.step(model, IDS, MASK, labels)]), *expected)
    _refusal(lambda: run([Job.train(model, [Batch(IDS, MASK, labels)])]), *expected)


def test_labels_at_the_last_class_are_fine(model):
    labels = torch.full((6,), model.config.num_labels - 1)
    assert run([Job.step(model, IDS, MASK, labels)])[0].loss > 0


@pytest.mark.parametrize("timeout_s", [0, -5, float("nan"), float("inf"), "10", True])
def test_the_timeout_must_be_a_number_of_seconds_above_zero(model, timeout_s):
    _refusal(lambda: run([Job.infer(model, IDS, MASK)], on="ranks", timeout_s=timeout_s), "timeout_s", "> 0")


@pytest.mark.parametrize(
    "fault, n_micro, expected",
    [
        (Fault(rank=1, how="hang"), 1, "runs 1 micro-batch forward(s), at 0..0"),  # the default at=1
        (Fault(rank=1, at=99), 2, "runs 2 micro-batch forward(s), at 0..1"),
        (Fault(rank=0, at=-1), 2, "would never fire"),
    ],
    ids=["default at, one micro-batch", "at 99", "at -1"],
)
def test_a_fault_that_would_never_fire_is_refused(model, fault, n_micro, expected):
    job = Job.infer(model, IDS, MASK, n_micro=n_micro, fault=fault)
    _refusal(lambda: run([job], on="ranks"), "would never fire", expected)


def test_a_fault_counts_the_forwards_of_every_batch_of_a_training_job(model):
    batches = [Batch(IDS, MASK, LABELS)] * 3
    job = Job.train(model, batches, n_micro=2, fault=Fault(rank=0, at=6))
    _refusal(lambda: run([job], on="ranks"), "runs 6 micro-batch forward(s), at 0..5")


def test_a_fault_is_refused_in_one_process(model):
    job = Job.infer(model, IDS, MASK, n_micro=2, fault=Fault(rank=1))
    _refusal(lambda: run([job], on="process"), "on='process' has none", "on='ranks'")


def test_a_place_that_is_neither_process_nor_ranks(model):
    _refusal(lambda: run([Job.infer(model, IDS, MASK)], on="gpu"), "'process' or 'ranks'", "'gpu'")


def test_something_that_is_not_a_job(model):
    _refusal(lambda: run([(IDS, MASK)]), "run takes Job objects", "tuple")


@pytest.mark.distributed
def test_a_script_that_starts_ranks_without_the_main_guard_gets_one_line(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            from pp_demo import run
            from pp_demo.pipeline.families import build_model
            from pp_demo.pipeline.jobs import Job
            import torch

            ids = torch.tensor([[0, 0, 5, 6], [5, 6, 7, 8]])
            print(run([Job.infer(build_model("llama"), ids, (ids != 0).long())], on="ranks"))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("pp_demo.errors.BadInput: line 8 of unguarded.py starts ranks outside")
    assert 'if __name__ == "__main__":' in last
    assert "bootstrapping phase" not in done.stderr and str(tmp_path) not in last


@pytest.mark.distributed
def test_the_same_script_under_the_guard_runs(tmp_path):
    script = tmp_path / "guarded.py"
    script.write_text(
        textwrap.dedent(
            """
            from pp_demo import run
            from pp_demo.pipeline.families import build_model
            from pp_demo.pipeline.jobs import Job
            import torch

            if __name__ == "__main__":
                ids = torch.tensor([[0, 0, 5, 6], [5, 6, 7, 8]])
                job = Job.infer(build_model("llama"), ids, (ids != 0).long())
                print(tuple(run([job], on="ranks")[0].logits.shape))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(2, 3)"
