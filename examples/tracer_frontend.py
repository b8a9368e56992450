"""PyTorch's pipeline tracer (``torch.distributed.pipelining.pipeline``) under pp_demo's checker.

The tracer captures a whole ``*ForSequenceClassification`` forward with ``torch.export``, cuts it
before a decoder layer and gives one submodule per stage. So the pooling is transformers' own,
carried into the last stage. Three callables for ``python -m pp_demo check``:

* ``traced_forward``: one process, both stages run here (the traced ``Pipe`` called directly).
  Passes for GPT-2 on transformers 4.51.3 and for Llama and GPT-2 on 5.x. 4.51.3's Llama does
  not trace: its rotary embedding runs under ``no_grad``/``autocast``, and the split graph loses
  a submodule (``AttributeError: 'InterpreterModule' object has no attribute 'submod_1'``;
  PyTorch issues 164030 and 184361).
* ``two_rank_forward``: one stage per rank under torchrun, ``ScheduleGPipe``. The last stage
  pools from ``input_ids``, a model input, and torch 2.13's stage runtime refuses a model input
  on a stage other than the first: ``PipeliningMetadataError: _retrieve_recv_activations
  expected non-root _RecvInfo but got root arg ...``.
* ``carried_ids_forward``: the same with the ids carried: the wrapper's forward starts with
  ``input_ids.clone()``, which the tracer puts in stage 0, so the ids reach the last stage as an
  activation sent by p2p. It passes.

    python -m pp_demo check examples.tracer_frontend:traced_forward --family gpt2
    torchrun --standalone --nproc-per-node 2 -m pp_demo check \\
        examples.tracer_frontend:carried_ids_forward --family gpt2 --micro-batches 2

Every batch shape is traced anew (the trace fixes the shapes): choose few shapes with
``--lengths`` and ``--batch-sizes``. Logits come back on the last rank, ``None`` elsewhere.
"""

from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.pipelining import ScheduleGPipe, SplitPoint, pipeline

__all__ = ["Classifier", "split_points", "traced_forward", "two_rank_forward", "carried_ids_forward"]


class Classifier(torch.nn.Module):
    """``(input_ids, attention_mask) -> logits`` with positional inputs, as the tracer feeds them."""

    def __init__(self, model: Any, carry_ids: bool = False) -> None:
        super().__init__()
        self.model = model
        self.carry_ids = carry_ids

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        if self.carry_ids:  # an op of stage 0: its result travels to the later stages
            input_ids = input_ids.clone()
        logits: torch.Tensor = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        return logits


def split_points(model: Any, stages: int, prefix: str = "model.") -> list[str]:
    """Module names that start stages 2..N: the decoder layers cut evenly (``model.layers.2``)."""
    layers = model.config.num_hidden_layers
    name = next(n for n, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == layers)
    return [f"{prefix}{name}.{layers * i // stages}" for i in range(1, stages)]


def _pipe(model: Any, ids: torch.Tensor, mask: torch.Tensor, stages: int, micro_batches: int, carry: bool) -> Any:
    rows = ids.shape[0] // micro_batches  # the tracer is shown one micro-batch
    spec = {name: SplitPoint.BEGINNING for name in split_points(model, stages)}
    return pipeline(Classifier(model, carry), mb_args=(ids[:rows], mask[:rows]), split_spec=spec)


def traced_forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Traced, split in two, and both stages run in this process."""
    pipe = _pipe(model, input_ids, attention_mask, stages=2, micro_batches=1, carry=False)
    logits: torch.Tensor = pipe(input_ids, attention_mask)[0]
    return logits


def two_rank_forward(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, micro_batches: int = 1, carry: bool = False
) -> torch.Tensor | None:
    """One stage per rank of torchrun's group; the logits on the last rank, ``None`` elsewhere."""
    rank, world = dist.get_rank(), dist.get_world_size()
    pipe = _pipe(model, input_ids, attention_mask, world, micro_batches, carry)
    schedule = ScheduleGPipe(pipe.build_stage(rank, torch.device("cpu")), micro_batches)
    if rank == 0:
        schedule.step(input_ids, attention_mask)
        return None
    out = schedule.step()
    return out if rank == world - 1 else None


def carried_ids_forward(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, micro_batches: int = 1
) -> torch.Tensor | None:
    """``two_rank_forward`` with the ids carried out of stage 0 as an activation."""
    return two_rank_forward(model, input_ids, attention_mask, micro_batches, carry=True)
