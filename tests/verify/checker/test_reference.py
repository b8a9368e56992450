"""The reference is the checker's own: nothing the callable does to what it is handed moves it,
and the caller's model comes back as it was given (weights and dtype).

Expected verdicts follow from what each callable does: a forward that zeroes the mask sees no
real token, so its logits cannot be ``model.forward``'s on a padded row; one that doubles the
score head's weight doubles every logit.
"""

import torch
from checker_callables import correct, scales_the_score, zeroes_the_mask

from pp_demo.core import build_model
from pp_demo.verify.checker.judge import check_forward

SMALL = {"cases": ["left", "right", "random"], "lengths": (6,), "batch_sizes": (2,)}


def test_a_forward_that_zeroes_its_mask_fails():
    report = check_forward(build_model("llama"), zeroes_the_mask, **SMALL)
    assert report.exit_code == 1
    left = next(c for c in report.cases if c.name == "left")
    assert not left.passed and left.attention_mask.tolist() == [[0, 0, 1, 1, 1, 1]]  # the checker's copy


def test_a_forward_that_scales_the_score_head_fails_on_every_batch():
    model = build_model("llama")
    before = model.score.weight.clone()
    report = check_forward(model, scales_the_score, **SMALL)
    assert report.exit_code == 1 and not any(c.passed for c in report.cases)
    row = report.cases[0].rows[0]
    assert row.pooled_at == ()  # twice the logits are no position's logits
    assert torch.equal(model.score.weight, before)  # the caller's model: untouched


def test_each_batch_gets_a_fresh_model_so_one_change_does_not_leak_into_the_next():
    calls = []

    def scales_once(model, ids, mask):
        calls.append(float(model.score.weight.abs().sum()))
        model.score.weight.mul_(2.0)
        return correct(model, ids, mask)

    check_forward(build_model("llama"), scales_once, **SMALL)
    assert len(calls) == 3 and calls[0] == calls[1] == calls[2]


def test_the_callers_model_keeps_its_dtype_and_weights():
    model = build_model("llama")
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    report = check_forward(model, correct, dtype=torch.bfloat16, **SMALL)
    assert report.passed
    assert next(model.parameters()).dtype == torch.float32
    assert all(torch.equal(weights[k], v) for k, v in model.state_dict().items())


def test_the_callable_gets_clones_not_the_checkers_tensors():
    seen = []

    def keeps(model, ids, mask):
        seen.append((ids, mask))
        return correct(model, ids, mask)

    report = check_forward(build_model("llama"), keeps, cases=["left"])
    case = report.cases[0]
    assert seen[0][0] is not case.input_ids and seen[0][1] is not case.attention_mask
    assert seen[0][0].data_ptr() != case.input_ids.data_ptr()
