"""Callables a new user might hand the checker, each a pipeline as a user would write it.

The correct ones compute the logits from the model's own hidden states at the position
``model.forward`` pools (the rightmost non-pad token); the others go wrong in one way each.
"""

import os
import signal
import sys
import threading

import numpy as np
import torch


def _rightmost_non_pad(model, ids):
    return (torch.arange(ids.shape[1]) * (ids != model.config.pad_token_id)).argmax(-1)


def correct(model, ids, mask):
    hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
    return model.score(hidden[torch.arange(ids.shape[0]), _rightmost_non_pad(model, ids)])


def exits(model, ids, mask):
    sys.exit(0)


def zeroes_the_mask(model, ids, mask):
    mask.zero_()  # in place: a checker that reused this tensor for its reference would agree
    return model(input_ids=ids, attention_mask=mask).logits


def scales_the_score(model, ids, mask):
    model.score.weight.mul_(2.0)  # in place, on the model it was handed
    return model(input_ids=ids, attention_mask=mask).logits


def two_arguments(model, ids):
    return correct(model, ids, torch.ones_like(ids))


def keyword_only(model, *, input_ids, attention_mask):
    return correct(model, input_ids, attention_mask)


def returns_a_list(model, ids, mask):
    return correct(model, ids, mask).tolist()


def returns_numpy(model, ids, mask):
    return np.asarray(correct(model, ids, mask))


def returns_the_output(model, ids, mask):
    return model(input_ids=ids, attention_mask=mask)


def returns_meta(model, ids, mask):
    return torch.empty(ids.shape[0], model.config.num_labels, device="meta")


def returns_nan(model, ids, mask):
    logits = correct(model, ids, mask).clone()
    logits[0] = float("nan")
    return logits


def raises_value_error(model, ids, mask):
    raise ValueError("my framework's own complaint")


def raises_runtime_error(model, ids, mask):
    raise RuntimeError("my framework crashed")


def wrong_shape(model, ids, mask):
    return torch.zeros(ids.shape[0], 5)


def hangs(model, ids, mask):
    threading.Event().wait()  # never set: a pipeline waiting for a peer that is gone


def takes_the_path(model, ids, mask, model_path=None, micro_batches=1):
    """Loads its own weights from the folder, as a rank would; refuses to run without it."""
    from transformers import AutoModelForSequenceClassification

    if model_path is None:
        raise RuntimeError("no model_path handed over")
    own = AutoModelForSequenceClassification.from_pretrained(model_path).eval()
    assert ids.shape[0] % micro_batches == 0
    return correct(own, ids, mask)


def hard_exit(model, ids, mask):
    os._exit(0)  # no Python handler sees this: the process is simply gone


def segfaults(model, ids, mask):
    os.kill(os.getpid(), signal.SIGSEGV)


def returns_inf(model, ids, mask):
    logits = correct(model, ids, mask).clone()
    logits[0, 0] = float("inf")
    return logits


async def is_async(model, ids, mask):
    return correct(model, ids, mask)
