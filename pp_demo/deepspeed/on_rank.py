"""What each of DeepSpeed's ranks runs: ``python -m pp_demo.deepspeed.on_rank FOLDER``.

The ranks start once for many cases (DeepSpeed's import is the cost). Every rank reads the
cases from ``FOLDER/cases.pt``, builds each case's tiny model from its seed (the same weights on
every rank), splits it with the core, and runs it on a fresh engine: ``eval_batch`` for the
logits, or ``train_batch`` for a few optimizer steps. The last stage holds the answers and
writes ``FOLDER/answers.pt``; a rank that fails writes its one-line cause to ``FOLDER/rankN.error``.
"""

import os
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from pp_demo.core import build_model, micro_batches, plan_run, stages_for
from pp_demo.deepspeed import beside_venv
from pp_demo.deepspeed.layers import pipeline_module
from pp_demo.ranks.jobs import micro_batch_loss

__all__ = ["EngineCase", "engine_for", "feed", "logits_of", "run_case", "prepare_deepspeed", "join_deepspeed", "main"]


@dataclass(frozen=True, eq=False)
class EngineCase:
    """One run on the engine: a tiny model of ``family`` with ``rule`` on its last stage, split at
    ``split_points`` (one rank per stage), on one batch. ``steps`` 0: ``eval_batch``, its logits;
    more: that many ``train_batch`` steps of Adam at ``lr``, their losses."""

    family: str
    rule: str
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor | None = None
    split_points: tuple[int, ...] | None = None
    n_micro: int = 1
    steps: int = 0
    lr: float = 1e-2
    seed: int = 0
    name: str = field(default="", kw_only=True)


def engine_for(pipeline: torch.nn.Module, rows: int, n_micro: int, lr: float | None = None) -> Any:
    """A DeepSpeed engine over ``pipeline``: ``n_micro`` micro-batches of ``rows // n_micro`` rows, on
    one data-parallel replica; torch's Adam where it trains (DeepSpeed's own is built for GPUs)."""
    import deepspeed

    config = {
        "train_micro_batch_size_per_gpu": rows // n_micro,
        "gradient_accumulation_steps": n_micro,
        "steps_per_print": 2**31 - 1,  # its progress lines carry times
        # DeepSpeed 0.19.8 clips the gradient norm at 1.0 unless told (measured: every gradient of the
        # tiny llama scaled by 0.373): the steps of torch's own training need no clipping
        "gradient_clipping": 0.0,
    }
    optimizer = None if lr is None else torch.optim.Adam(pipeline.parameters(), lr=lr)
    engine, *_ = deepspeed.initialize(model=pipeline, optimizer=optimizer, config=config)
    return engine


def feed(input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor | None, n_micro: int) -> Any:
    """The engine's data: one ``((ids, mask), labels)`` per micro-batch; the first stage reads the
    inputs, the last the labels (zeros where nothing trains)."""
    labels = torch.zeros(input_ids.shape[0], dtype=torch.long) if labels is None else labels
    rows = micro_batches(input_ids.shape[0], n_micro)
    return iter([((input_ids[r], attention_mask[r]), labels[r]) for r in rows])


def logits_of(engine: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_micro: int) -> Any:
    """``eval_batch``'s logits of every micro-batch, in order, on the last stage (None elsewhere).
    Without a loss, the engine keeps each micro-batch's output (``return_logits`` keeps the last only)."""
    outputs = engine.eval_batch(
        feed(input_ids, attention_mask, None, n_micro),
        compute_loss=False,
        reduce_output=None,
        bcast_loss=False,
        num_micro_batches=n_micro,
    )
    return torch.cat(outputs).detach() if engine.is_last_stage() else None


def run_case(case: EngineCase) -> Any:
    """The case's logits (``eval_batch``) or its losses per step (``train_batch``), on the last stage."""
    model = build_model(case.family, seed=case.seed)
    plan = plan_run(model, case.input_ids, case.attention_mask, case.rule, case.split_points, case.n_micro)
    rows = case.input_ids.shape[0]
    pipeline = pipeline_module(stages_for(plan), micro_batch_loss)
    engine = engine_for(pipeline, rows, case.n_micro, case.lr if case.steps else None)
    if not case.steps:
        return logits_of(engine, case.input_ids, case.attention_mask, case.n_micro)
    losses = []
    for _ in range(case.steps):
        loss = engine.train_batch(feed(case.input_ids, case.attention_mask, case.labels, case.n_micro))
        losses.append(float(loss))
    return losses


def prepare_deepspeed() -> None:
    """Before ``init_distributed``: DeepSpeed logs its set-up at INFO, with times and addresses
    (errors only, here), and on a CPU it would compile a shared-memory all-reduce with ninja
    (minutes on a fresh machine, measured) after probing a compiler for each of its C++ ops. A
    pipeline of one replica reduces nothing: an empty table of compatible ops skips both."""
    import logging

    os.environ.setdefault("DS_ACCELERATOR", "cpu")  # else it probes for a GPU and warns, unasked
    if (folder := beside_venv()) is not None and folder not in sys.path:  # a torchrun of the user's own
        sys.path.insert(0, folder)
    import deepspeed.ops
    from deepspeed.utils import logger

    logger.setLevel(logging.ERROR)
    deepspeed.ops.__compatible_ops__ = {}


def join_deepspeed(timeout_s: float) -> None:
    """``prepare_deepspeed``, then DeepSpeed's communication on gloo: torchrun's process group, joined
    here or already (the checker joins it first); a second call changes nothing."""
    prepare_deepspeed()
    import deepspeed

    deepspeed.init_distributed(dist_backend="gloo", verbose=False, timeout=timedelta(seconds=timeout_s))


def main(folder: str) -> None:
    rank, timeout_s = int(os.environ["RANK"]), float(os.environ.get("PP_DEMO_TIMEOUT_S", "120"))
    try:
        join_deepspeed(timeout_s)
        cases = torch.load(Path(folder, "cases.pt"), weights_only=False)
        answers = [run_case(case) for case in cases]
    except BaseException as error:
        cause = error
        while cause.__cause__ is not None:
            cause = cause.__cause__
        written = Path(folder, f"rank{rank}.error.tmp")
        written.write_text(f"{type(cause).__name__}: {' '.join(str(cause).split())}")
        written.replace(written.with_suffix(""))
        raise
    if rank == int(os.environ["WORLD_SIZE"]) - 1:
        torch.save(answers, Path(folder, "answers.pt"))
    # Every rank leaves together, its group closed: a rank that exits while a peer's gloo still
    # holds its connection can make that peer's gloo thread throw, and the peer abort (SIGABRT),
    # its answers written (seen in CI, under load).
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
