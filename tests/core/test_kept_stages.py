"""The in-process pipeline splits a model once and uses the stages again while the model is
what they were built from: every answer still equals ``model.forward``'s after any change."""

import copy
import gc
import weakref

import pytest
import torch

from pp_demo import core
from pp_demo.core import as_batch, build_model, pipeline_logits


@pytest.fixture
def splits(monkeypatch):
    made = []

    split = core._split  # the one place the stages are built

    def counting(*args, **kwargs):
        made.append(args[2:])
        return split(*args, **kwargs)

    monkeypatch.setattr(core, "_split", counting)
    return made


def doubled(layer):
    """A new layer object in the same place, computing something else."""
    new = copy.deepcopy(layer)
    with torch.no_grad():
        new.mlp.down_proj.weight.mul_(2)
    return new


def forward(model, ids, mask):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits


def test_one_split_serves_every_call_of_one_model_and_split(splits):
    model = build_model("llama")
    ids, mask = as_batch(["left", "right"], "cpu")
    for _ in range(3):
        torch.testing.assert_close(pipeline_logits(model, ids, mask, n_micro=2), forward(model, ids, mask))
    pipeline_logits(model, ids, mask, split_points=1)
    assert len(splits) == 2  # the default split once, split point 1 once


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda m: setattr(m.config, "pad_token_id", 5), id="config"),
        pytest.param(lambda m: m.to(torch.float64), id="to-float64"),
        pytest.param(lambda m: m.model.layers.__setitem__(3, doubled(m.model.layers[3])), id="layer"),
        pytest.param(lambda m: setattr(m, "score", torch.nn.Linear(16, 3, bias=False)), id="head"),
    ],
)
def test_a_changed_model_is_split_again_and_matches_its_forward(splits, change):
    model = build_model("llama")
    ids, mask = as_batch(["left", "right"], "cpu")
    pipeline_logits(model, ids, mask)
    change(model)
    ids, mask = as_batch(["left", "right"], "cpu")
    torch.testing.assert_close(pipeline_logits(model, ids, mask), forward(model, ids, mask))
    assert len(splits) == 2


def test_the_kept_stages_do_not_keep_the_model_alive():
    model = build_model("qwen2")
    pipeline_logits(model, *as_batch(["left"], "cpu"))
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None
