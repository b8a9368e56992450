"""Training through the pipeline: the fix trains exactly like model.forward, the count rule does not.

Same initial weights, same micro-batches, same gradient scaling, same optimizer; the
two pipelines run as two real ranks (1F1B, gloo) in one start.
"""

import pytest
import torch

from pp_demo.ranks.jobs import IGNORED, Job, Training, micro_batch_loss
from pp_demo.ranks.runner import run
from pp_demo.training.loop import accuracy_by_side, fresh_model, load_params, make_batches, train_unpipelined

STEPS = 25


@pytest.fixture(scope="module")
def runs():
    batches = make_batches(STEPS, batch_size=16, seed=0)
    reference = fresh_model()
    losses, _ = train_unpipelined(reference, batches, n_micro=2)
    jobs = [
        Job.train(fresh_model(), batches, rule=rule, n_micro=2, keep_params_every=10)
        for rule in ("rightmost_non_pad", "count")
    ]
    fixed, count = run(jobs, on="ranks", timeout_s=300)
    return reference, losses, fixed, count


def test_the_ranks_keep_the_parameters_of_every_kth_step(runs):
    _, _, fixed, _ = runs
    assert sorted(fixed.params_at) == [10, 20]  # 25 steps, every 10th
    # after step 10 of 25 the parameters are those of a run of the first 10 batches
    first_ten = run([Job.train(fresh_model(), make_batches(STEPS, batch_size=16, seed=0)[:10], n_micro=2)])[0]
    for name, value in first_ten.params.items():
        assert torch.allclose(fixed.params_at[10][name], value, atol=1e-5, rtol=0), name


def test_a_row_labelled_ignored_adds_zero_to_the_loss_but_counts_in_the_mean():
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [5.0, 5.0, 5.0]])
    labels = torch.tensor([0, 1, IGNORED])
    by_hand = -(torch.log_softmax(logits[0], -1)[0] + torch.log_softmax(logits[1], -1)[1]) / 3
    assert torch.allclose(micro_batch_loss(logits, labels), by_hand)


def test_the_fixed_pipeline_trains_exactly_like_model_forward(runs):
    reference, losses, fixed, _ = runs
    assert isinstance(fixed, Training) and len(fixed.losses) == STEPS
    assert max(abs(a - b) for a, b in zip(fixed.losses, losses, strict=True)) <= 1e-5
    trained = load_params(fresh_model(), fixed.params)
    for name, p in reference.named_parameters():
        assert torch.allclose(dict(trained.named_parameters())[name], p, atol=1e-5, rtol=0), name


def test_the_count_rule_pipeline_trains_on_other_outputs(runs):
    _, losses, _, count = runs
    assert count.losses[0] != pytest.approx(losses[0], abs=1e-5)  # the first step already differs
    assert max(abs(a - b) for a, b in zip(count.losses, losses, strict=True)) > 0.1


def test_every_row_is_labelled_by_its_last_real_token():
    batch = make_batches(1, batch_size=32, seed=3)[0]
    last = (torch.arange(8) * batch.attention_mask).argmax(-1)
    assert torch.equal(batch.labels, batch.input_ids[torch.arange(32), last] % 3)
    assert (batch.input_ids[batch.attention_mask == 1] != 0).all()  # the pad id is never a real token
    assert batch.left_padded.any() and (~batch.left_padded).any()  # both sides in one batch


def test_accuracy_is_split_by_padding_side():
    batch = make_batches(1, batch_size=8, seed=0)[0]
    perfect = torch.nn.functional.one_hot(batch.labels, 3).float()
    assert accuracy_by_side(perfect, batch) == {"left": 1.0, "right": 1.0}


def test_loading_incomplete_parameters_is_refused():
    with pytest.raises(ValueError, match="no trained value"):
        load_params(fresh_model(), {})


def test_training_in_process_equals_training_on_ranks_and_leaves_the_model_as_it_was(runs):
    _, _, fixed, _ = runs
    model = fresh_model()
    before = {n: p.clone() for n, p in model.named_parameters()}
    local = run([Job.train(model, make_batches(3, batch_size=16, seed=0), n_micro=2)], on="process")[0]
    assert len(local.losses) == 3  # the first three steps of the same seeded batches
    assert max(abs(a - b) for a, b in zip(local.losses, fixed.losses[:3], strict=True)) <= 1e-5
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
