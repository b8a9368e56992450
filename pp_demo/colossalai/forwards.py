"""ColossalAI 0.5.0's own pipeline forwards, run on the CPU beside pp_demo (notebook 06).

ColossalAI is optional (``make colossalai`` installs it without its requirements, whose torch
<= 2.5.1 conflicts with the pinned torch, next to the few packages its import needs) and
imported inside the functions below, so the rest of pp_demo never needs it.

``colossalai_forwards()`` sets up what ColossalAI's code needs on a CPU, once per process,
and returns per family a ``forward(model, input_ids, attention_mask) -> logits`` running the
family's ``*_for_sequence_classification_forward`` (``colossalai.shardformer.modeling``) on a
one-stage pipeline holding every layer (``stage_index=[0, num_layers]``), as the pull
request's test does: one call embeds, runs the layers and pools with ColossalAI's own
last-stage code. ``colossalai_forward`` picks the callable by the model's class, as
``pp_demo.verify.checker.judge`` takes it::

    python -m pp_demo check pp_demo.colossalai.forwards:colossalai_forward --family opt
"""

import contextlib
import functools
import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist

from pp_demo.colossalai import MissingPackage
from pp_demo.core import count_layers, family_of
from pp_demo.silent_imports import import_quietly

__all__ = ["FORWARD_ATTENTION", "FORWARDS", "colossalai_forwards", "colossalai_forward", "pipeline_forward"]
__all__ += ["one_stage", "call_one_stage", "LATER_FORWARDS", "ALL_FORWARDS", "forwards_in_tree"]
__all__ += ["forget_imported_tree", "cuda_set_device_is_a_no_op"]

Forward = Callable[[Any, torch.Tensor, torch.Tensor], torch.Tensor]
"""A pooled forward ``(model, input_ids, attention_mask) -> logits``, as the checker takes."""
# GPT-2's default sdpa attention differs from ColossalAI's body by float noise on every row
# (tests/colossalai/test_colossalai.py shows why): beside these forwards it is built eager.
FORWARD_ATTENTION = {"gpt2": "eager"}

# family -> the class in colossalai.shardformer.modeling.<family> whose
# <family>_for_sequence_classification_forward is the family's pooled pipeline forward
FORWARDS = {
    "llama": "LlamaPipelineForwards",
    "qwen2": "Qwen2PipelineForwards",
    "opt": "OPTPipelineForwards",
    "gpt2": "GPT2PipelineForwards",
    "bloom": "BloomPipelineForwards",
    "falcon": "FalconPipelineForwards",
    "gptj": "GPTJPipelineForwards",
    "mistral": "MistralForwards",
}
# Added to ColossalAI after its 0.5.0 release: the nightly build 2025.7.12 has a ninth
# pooling forward, Qwen3's. Kept apart so that the 0.5.0 callables above never import it.
LATER_FORWARDS = {"qwen3": "Qwen3PipelineForwards"}
ALL_FORWARDS = {**FORWARDS, **LATER_FORWARDS}

# Bloom's and Falcon's last stage read the batch size from ``hidden_states.shape[0]``, the
# tensor an earlier stage sends. With one stage nothing is sent, so they need a placeholder.
_BATCH_FROM_HIDDEN = ("bloom", "falcon")

_MISSING = (
    "ColossalAI is not installed in this environment. Install it with `make colossalai` "
    "(pip install --no-deps colossalai==0.5.0 and the `colossalai` extra), see docs/colossalai.md."
)


def _import_quietly(name: str) -> ModuleType:
    """Import a ColossalAI module without what it and its dependencies print at import time."""
    try:
        # At import ColossalAI warns that optional CUDA add-ons are missing (apex's fused RMSNorm,
        # tensornvme's async save) and decorates kernels with torch.jit.script, which torch 2.13
        # deprecates; bitsandbytes, in its import chain, logs a kernel probe on CPUs with
        # avx512_bf16. None of that code runs here; on stderr it would fail strict nbval
        # (pp_demo.silent_imports).
        return import_quietly(name)
    except ImportError as error:
        # one line in a notebook (pp_demo.workshop.cell_errors), not ColossalAI's import chain
        raise MissingPackage(f"{_MISSING} ({error})") from None


@functools.cache
def one_stage() -> tuple[Any, Any]:
    """``(stage_manager, shard_config)`` of a one-stage pipeline in this process, made once."""
    cluster = _import_quietly("colossalai.cluster")
    stage_manager = _import_quietly("colossalai.pipeline.stage_manager")
    shardformer = _import_quietly("colossalai.shardformer")
    # The forwards log under their own module names, outside the "transformers" logger, so Python's
    # last-resort handler would print them on stderr: "use_cache ... not supported", Falcon's every
    # call.
    logging.getLogger("colossalai").setLevel(logging.ERROR)

    # 1. A process group of size 1 (ProcessGroupMesh asserts that torch.distributed is initialised
    #    and builds the pipeline's groups from it): gloo on the CPU, an in-memory store (no port).
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    elif dist.get_world_size() != 1:
        raise RuntimeError(
            f"a one-stage pipeline needs a process group of size 1; this process "
            f"is one of {dist.get_world_size()} ranks"
        )
    # 2. A stage manager for one stage. Its only stage is both the first (it embeds the
    #    input_ids) and the last (it runs the final norm, the score head and the pooling).
    manager = stage_manager.PipelineStageManager(cluster.ProcessGroupMesh(1), pipeline_axis=0)
    # 3. The ShardConfig every forward reads its parallel settings from. No policy sharded these
    #    models: tensor parallelism (on by default) off; flash attention and sequence parallelism
    #    stay off, as by default.
    config = shardformer.ShardConfig(enable_tensor_parallelism=False, pipeline_stage_manager=manager)
    return manager, config


@contextlib.contextmanager
def cuda_set_device_is_a_no_op() -> Iterator[None]:
    # 4. OPT's, GPT-2's and GPT-J's forwards call torch.cuda.set_device with their tensors' device,
    #    unconditionally, which raises "Expected a cuda device" for the CPU. The tensors are already
    #    where they belong, so doing nothing is what the call means here, until the block ends.
    with mock.patch.object(torch.cuda, "set_device", lambda device: None):
        yield


def pipeline_forward(family: str) -> Callable[..., Any]:
    """ColossalAI's own function for ``family``, as released (imported on first use)."""
    classes = _import_quietly(f"colossalai.shardformer.modeling.{family}")
    function: Callable[..., Any] = getattr(getattr(classes, ALL_FORWARDS[family]), _method(family))
    return function


def _method(family: str) -> str:
    return f"{family}_for_sequence_classification_forward"


def call_one_stage(
    function: Callable[..., Any],
    module: Any,
    layers: int,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    grad: bool = False,
    **inputs: Any,
) -> Any:
    """Call one of ColossalAI's pipeline forwards (a ``*_model_forward`` or a sequence
    classification forward) on ``module`` as the only stage, holding ``layers`` layers; without
    gradients unless ``grad`` (a training step timed beside pp_demo's: ``tools/stage_compute.py``)."""
    manager, config = one_stage()
    with torch.set_grad_enabled(grad), cuda_set_device_is_a_no_op():
        return function(
            module,
            input_ids=input_ids,
            attention_mask=attention_mask,
            use_cache=False,
            stage_manager=manager,
            stage_index=[0, layers],
            shard_config=config,
            **inputs,
        )


def _one_stage_callable(family: str) -> Forward:
    function = pipeline_forward(family)

    def forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        if family_of(model).name != family:
            raise ValueError(f"this is ColossalAI's {family} forward; the model is a {type(model).__name__}")
        extra: dict[str, Any] = {}  # tensors
        if family in _BATCH_FROM_HIDDEN:
            # 5. A placeholder hidden_states: only its first dimension, the batch size, is
            #    read. The stage computes the real hidden states from input_ids.
            extra["hidden_states"] = torch.empty(input_ids.shape[0], 0, device=input_ids.device)
        logits: torch.Tensor = call_one_stage(
            function, model, count_layers(model), input_ids, attention_mask, **extra
        ).logits
        return logits

    forward.__name__ = f"colossalai_{family}_forward"
    forward.__doc__ = f"ColossalAI's {ALL_FORWARDS[family]}.{_method(family)} on one stage holding every layer."
    return forward


@functools.cache
def _callables() -> dict[str, Forward]:
    return {family: _one_stage_callable(family) for family in FORWARDS}


def colossalai_forwards() -> dict[str, Forward]:
    """``{family: Forward}`` for the eight families whose ColossalAI 0.5.0 pipeline sequence
    classification forward pools from input_ids (0.5.0 has no Qwen3 modeling file); an
    ``ImportError`` saying how to install ColossalAI when it is missing."""
    return dict(_callables())


def colossalai_forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """ColossalAI 0.5.0's pipeline forward for the model's family, on one stage."""
    family = family_of(model).name
    if family not in FORWARDS:
        raise ValueError(
            f"ColossalAI 0.5.0 has no pooled pipeline forward studied here for {family}; "
            f"families: {', '.join(FORWARDS)}"
        )
    return _callables()[family](model, input_ids, attention_mask)


def forwards_in_tree() -> dict[str, object]:
    """``{family: forward}`` for every pooling forward the imported ColossalAI has: eight in
    0.5.0, nine in a tree with ``qwen3.py`` (checked by file, so nothing else is imported)."""
    modeling = importlib.util.find_spec("colossalai.shardformer.modeling")
    if modeling is None or not modeling.submodule_search_locations:
        raise MissingPackage(_MISSING)
    folder = modeling.submodule_search_locations[0]
    present = [family for family in ALL_FORWARDS if os.path.exists(os.path.join(folder, f"{family}.py"))]
    return {family: _one_stage_callable(family) for family in present}


def forget_imported_tree() -> None:
    """Drop the imported ColossalAI and what was made from it, so that the next call imports another
    tree from ``sys.path`` (verify-pr's worker, ``pull_request.worker``, runs several variants in one process)."""
    for name in [n for n in sys.modules if n == "colossalai" or n.startswith("colossalai.")]:
        del sys.modules[name]
    one_stage.cache_clear()
    _callables.cache_clear()
