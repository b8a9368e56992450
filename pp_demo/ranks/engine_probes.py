"""Two looks inside ``torch.distributed.pipelining`` on real ranks, for the tests and notebook 10:
the order each rank's stage really runs its forwards and backwards in (``OrderProbe``: what
``pp_demo.ranks.schedules`` writes down without starting ranks must be this), and a stage reused
for a second sequence length (``ShapeTrapProbe``), which the runner never does
(``pp_demo.ranks.on_rank.StageCache`` builds one per shape): the hidden states arrive in the
old shape, the ids and mask in the new one, and the last stage fails on the mismatch.
Both are ``RankJob``s, for ``run([...], on="ranks")``.
"""

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from pp_demo.core import as_batch, build_model
from pp_demo.ranks.jobs import Job, even_split_points
from pp_demo.ranks.on_rank import StageCache, pipeline_step

__all__ = ["OrderProbe", "ShapeTrapProbe"]

_ROWS = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded", "left"]


@dataclass(frozen=True)
class OrderProbe:
    """One training step of a tiny Llama classifier, ``n_micro`` one-row micro-batches, on
    ``n_stages`` ranks with ``schedule`` ("gpipe" or "1f1b"). Result: per stage, the ops
    it ran, in order (gathered on the last rank)."""

    schedule: str
    n_stages: int
    n_micro: int

    def run_on_rank(self, rank: int, world_size: int, cache: StageCache, device: torch.device) -> list[Any]:
        model = build_model("llama").to(device)
        ids = torch.tensor([[1 + (i + k) % 7 for k in range(4)] for i in range(self.n_micro)], device=device)
        mask, labels = torch.ones_like(ids), torch.arange(self.n_micro, device=device) % 3
        points = even_split_points(4, world_size)
        job = Job.step(model, ids, mask, labels, n_micro=self.n_micro, schedule=self.schedule, split_points=points)
        schedule, module = cache.get(job, ids.shape, training=True)
        module.train()
        log: list[str] = []

        def record(_module: torch.nn.Module, _args: Any, output: Any) -> None:
            # "F<i>" when the stage runs forward i, "B<i>" when the gradient of forward i's output
            # arrives (the start of that micro-batch's backward on this stage)
            index = sum(op[0] == "F" for op in log)
            log.append(f"F{index}")
            if output.requires_grad:
                output.register_hook(lambda grad: log.append(f"B{index}"))

        handle = module.register_forward_hook(record)
        pipeline_step(schedule, rank, world_size, ids, mask, labels, [])
        handle.remove()
        orders: list[Any] = [None] * world_size
        dist.all_gather_object(orders, log)
        return orders


@dataclass(frozen=True)
class ShapeTrapProbe:
    """A 2-stage inference schedule built for notebook 10's (6, 6) batch (one micro-batch),
    stepped on it, then reused on a (9, 4) batch: its rows cut to their last 4 columns, and the
    first three of those again. Result: the (9, 4) batch, and what the reused engine gave for
    it: ``logits`` (to compare with ``model.forward``) or, where a stage failed, ``error``, that
    exception's one line (caught on its rank, so the run goes on).

    Only the hidden states cross between the ranks, into a buffer shaped at the first step,
    while each stage gets the new ids and mask from the schedule: the last stage's layers get
    hidden states of shape (6, 6, hidden) and a mask of (9, 4), and fail on the mismatch. On
    torch 2.11 the last rank never gets that far: its receive waits for hidden states that
    never come, so the stages talk over a process group of their own whose operations give up
    after ``wait_s`` (an error on that rank, not a hang). One micro-batch: with more, the
    first rank would wait to send a second one to the failed stage.
    ``tests/ranks/test_engine_order.py`` holds it on each torch CI runs."""

    n_stages: int = 2
    wait_s: float = 5.0

    def run_on_rank(
        self, rank: int, world_size: int, cache: StageCache, device: torch.device
    ) -> dict[str, torch.Tensor | str | None]:
        group = dist.new_group(backend="gloo", timeout=timedelta(seconds=self.wait_s))
        cache = StageCache(rank, world_size, device, group)  # its own: never reused by a later job
        model = build_model("llama").to(device)
        ids, mask = (t.to(device) for t in as_batch(_ROWS))
        job = Job.infer(model, ids, mask, n_micro=1, split_points=even_split_points(4, world_size))
        schedule, module = cache.get(job, ids.shape, training=False)
        module.eval()
        short_ids, short_mask = (torch.cat([t[:, 2:], t[:3, 2:]]).contiguous() for t in (ids, mask))
        logits, error = None, None
        with torch.no_grad():
            pipeline_step(schedule, rank, world_size, ids, mask)  # the shapes are fixed here
            try:
                logits = pipeline_step(schedule, rank, world_size, short_ids, short_mask)
            except RuntimeError as failure:
                cause = failure.__cause__ or failure  # the engine wraps the stage's own error
                error = f"{type(cause).__name__}: {str(cause).splitlines()[0]}"
        errors: list[Any] = [None] * world_size
        dist.all_gather_object(errors, error)  # which rank failed, for the last rank's answer
        failed = [f"rank {r}: {e}" for r, e in enumerate(errors) if e is not None]
        return {
            "input_ids": short_ids.cpu(),
            "attention_mask": short_mask.cpu(),
            "logits": None if logits is None else logits.cpu(),
            "error": "; ".join(failed) or None,
        }
