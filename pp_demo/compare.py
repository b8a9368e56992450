"""Compare a pipeline's logits with ``model.forward``, row by row, and the reproduction.

``model.forward`` is the reference of *exactness*: a pipeline is right when it returns
the logits the unsplit model returns. (Whether ``model.forward`` itself pools the true
last real token is a different question, judged in ``pp_demo.table``.)
"""

import warnings
from dataclasses import dataclass

import torch

from .cases import as_batch
from .families import build_model
from .local import pipeline_logits
from .rules import FIX

__all__ = ["RowComparison", "default_atol", "forward_logits", "compare_rows", "REPRO_ROWS",
           "reproduce", "reproduction_line", "default_device"]

REPRO_ROWS = ("left", "right")
"""The reproduction's batch: the left-padded row first, then the right-padded one."""


def default_device():
    # Asking warns on a machine with a CUDA driver too old or broken (the answer is then False):
    # the CPU it is, without a machine-dependent line on stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return "cuda" if torch.cuda.is_available() else "cpu"


def default_atol(device):
    """1e-6 on CPU fp32. On a GPU, scoring one pooled position and scoring every
    position then indexing may reduce in another order; 1e-5 still sits four orders
    of magnitude below the bug's differences (about 0.05 and up on the tiny models)."""
    return 1e-6 if torch.device(device).type == "cpu" else 1e-5


@torch.no_grad()
def forward_logits(model, input_ids, attention_mask):
    """What the unsplit model returns: the reference."""
    device = next(model.parameters()).device
    return model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device)).logits


@dataclass(frozen=True)
class RowComparison:
    matches: list[bool]
    max_abs_diff: list[float]
    atol: float

    @property
    def all_match(self):
        return all(self.matches)


def compare_rows(logits, reference, atol):
    """Per row: does it match the reference within ``atol``, and by how much it differs."""
    if logits.shape != reference.shape:
        raise ValueError(f"logits of shape {tuple(logits.shape)} cannot be compared with "
                         f"reference logits of shape {tuple(reference.shape)}")
    diff = (logits.float() - reference.float()).abs().amax(-1).cpu()
    return RowComparison([bool(d <= atol) for d in diff], [float(d) for d in diff], atol)


def reproduce(family, rule=FIX, split_at=None, n_micro=1, seed=0, device=None, rows=REPRO_ROWS):
    """The bug in one call: a tiny seeded model, split in two, on the reproduction batch.

    Weights are drawn on the CPU with ``seed`` and then moved, so every device runs
    the same model; both stages run in this process (``pp_demo.cli`` has the two-rank form).
    """
    device = device or default_device()
    model = build_model(family, seed=seed).to(device)
    ids, mask = as_batch(rows, device)
    logits = pipeline_logits(model, ids, mask, rule=rule, split_at=split_at, n_micro=n_micro)
    return compare_rows(logits, forward_logits(model, ids, mask), default_atol(device))


def reproduction_line(comparison):
    """The agreed output format of the reproduction, one line per run."""
    return f"row matches model.forward: {comparison.matches}"
