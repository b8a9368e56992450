"""``python -m pp_demo check MODULE:BUILDER --engine deepspeed``: a DeepSpeed pipeline someone wrote, judged.

The user's callable builds their own ``PipelineModule`` from the model: ``BUILDER(model)``, their
layers and their pooling, weights shared with the model. The command starts ``--ranks`` ranks
(``pp_demo.deepspeed.launch``: a free port, DeepSpeed on the CPU, gloo) and each runs the checker
(``pp_demo.verify.checker``) under torchrun's variables, as ``torchrun ... -m pp_demo check`` would.
On every rank the builder becomes a forward: for each batch a fresh engine over the builder's
pipeline, ``eval_batch``, the logits on the last stage. The last rank judges and prints; the
command exits with its code. Under a torchrun of your own, the command is that rank already.
"""

import argparse
import inspect
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import torch

from pp_demo.deepspeed.launch import start_ranks
from pp_demo.ranks.launch import PipelineError
from pp_demo.ranks.torchrun_env import is_torchrun_rank
from pp_demo.verify.checker.cli import run_check

__all__ = ["deepspeed_forward", "run_deepspeed_check", "STARTUP_S"]

STARTUP_S = 120  # the ranks' imports and DeepSpeed's set-up, before the first batch (measured: about 10 s)
BATCHES_AT_MOST = 40  # the default battery is 16; the deadline of the whole run is this many --timeout


def deepspeed_forward(builder: Callable[..., Any]) -> Callable[..., Any]:
    """The checker's forward for ``builder``: every batch on a fresh engine (a batch's shape and
    micro-batch count are fixed when the engine is made), logits on the last stage, None elsewhere."""
    takes_model_path = "model_path" in inspect.signature(builder).parameters

    def forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, micro_batches: int = 1,
                model_path: str | None = None) -> Any:  # fmt: skip
        from pp_demo.deepspeed.on_rank import engine_for, join_deepspeed, logits_of

        join_deepspeed(STARTUP_S)
        pipeline = builder(model, model_path=model_path) if takes_model_path else builder(model)
        engine = engine_for(pipeline, input_ids.shape[0], micro_batches)
        return logits_of(engine, input_ids, attention_mask, micro_batches)

    forward.__name__ = getattr(builder, "__name__", "forward")
    return forward


def run_deepspeed_check(args: argparse.Namespace) -> int:
    """On a rank: the checker with the builder as its forward. Elsewhere: start the ranks, each
    running this very command; the last rank's exit code (its report is printed as it goes)."""
    if is_torchrun_rank():
        os.environ.setdefault("DS_ACCELERATOR", "cpu" if args.device == "cpu" else "cuda")
        return run_check(args, wrap=deepspeed_forward)
    deadline = STARTUP_S + BATCHES_AT_MOST * args.timeout
    with tempfile.TemporaryDirectory(prefix="pp_demo_deepspeed_check_") as folder:
        try:
            codes = start_ranks(["-m", "pp_demo", *args.argv], args.ranks, deadline, folder, last_speaks=True)
        except PipelineError as error:
            print(f"FAIL (your callable failed): {error}", flush=True)
            return 3
    sys.stdout.flush()
    return codes[-1] if codes[-1] >= 0 else 3
