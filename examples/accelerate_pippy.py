"""accelerate's ``prepare_pippy`` (accelerate 1.15) under pp_demo's checker.

``prepare_pippy`` traces the model with PyTorch's pipeline tracer (see ``tracer_frontend.py``),
builds this rank's stage and replaces ``model.forward`` by its own: the first rank feeds the
batch, the last rank calls ``step()`` with no arguments and holds the logits.

* One process (``pippy_forward``): the pipeline is one stage, and the batch is still cut into
  ``--micro-batches`` chunks. With a pad id it passes. Without one (accelerate's own test
  builds GPT-2 with ``pad_token_id=None`` and micro-batches of one row) transformers pools the
  last position of a single row, so a right-padded row is read at a pad token. ``model.forward``
  refuses that batch; the checker judges it by the true last real token and catches it:

      python -m pp_demo check examples.accelerate_pippy:pippy_forward \\
          --model-path GPT2_WITHOUT_PAD --micro-batches 2 --batch-sizes 2 4

* Two ranks: the last stage needs ``input_ids`` (a model input) and torch 2.13 refuses that
  (``PipeliningMetadataError``, as for the tracer); ``carried_ids_pippy`` carries them out of
  stage 0 and passes:

      torchrun --standalone --nproc-per-node 2 -m pp_demo check \\
          examples.accelerate_pippy:carried_ids_pippy --family gpt2 --micro-batches 2 --batch-sizes 2 4

Keep every batch size a multiple of ``--micro-batches``: for other sizes accelerate pads the
batch with zero rows and returns them (a 7-row batch on 2 processes fails with
``shape '[4, -1]' is invalid``).
"""

import os
import tempfile
from typing import Any

import torch
import torch.distributed as dist

from examples.tracer_frontend import Classifier, split_points

__all__ = ["pippy_forward", "carried_ids_pippy"]


def _ensure_group() -> None:
    """A pipeline stage needs a process group: torchrun's, or a one-process one here."""
    if not dist.is_initialized():
        path = os.path.join(tempfile.mkdtemp(prefix="pippy_"), "store")
        dist.init_process_group("gloo", init_method=f"file://{path}", rank=0, world_size=1)


def pippy_forward(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, micro_batches: int = 1, carry: bool = False
) -> torch.Tensor | None:
    """``prepare_pippy`` on one stage per process; the logits on the last rank, ``None`` elsewhere."""
    from accelerate import PartialState
    from accelerate.inference import prepare_pippy

    _ensure_group()
    # on CPU, accelerate sees torchrun's ranks only when told it runs on the CPU; else it
    # counts one process and every rank runs the whole schedule (its state is shared, first call wins)
    PartialState(cpu=not torch.cuda.is_available())
    stages, rows = dist.get_world_size(), input_ids.shape[0] // micro_batches
    pipelined = prepare_pippy(
        Classifier(model, carry),
        split_points=split_points(model, stages),
        example_args=(input_ids[:rows], attention_mask[:rows]),  # one micro-batch, as the tracer expects
        num_chunks=micro_batches,
    )
    out: torch.Tensor | None = pipelined(input_ids, attention_mask)
    return out


def carried_ids_pippy(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, micro_batches: int = 1
) -> torch.Tensor | None:
    """``pippy_forward`` with the ids carried out of stage 0 as an activation."""
    return pippy_forward(model, input_ids, attention_mask, micro_batches, carry=True)
