"""One rank of ColossalAI's own pipeline engine: ``HybridParallelPlugin(pp_size=2)``, ``Booster``,
``booster.execute_pipeline``, on every case of a job, in one process start.

Started by ``engine.run`` as ``python -m pp_demo.instruments.engine.worker JOB OUT`` (``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` set, the tree to test first on ``PYTHONPATH``), or
called in-process under torchrun (``run_cases``). Per case the last rank records, against the same
seeded model's ``model.forward``: the logits, where each row was pooled
(``pp_demo.verify.where_pooled``), the loss, a training step's largest gradient difference over both
stages, what crossed between the ranks and what each stage's forward received (the evidence for the
pull request's multi-stage sentence).
"""

import contextlib
import copy
import faulthandler
import json
import logging
import os
import pathlib
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist

from pp_demo.colossalai.forwards import FORWARD_ATTENTION, cuda_set_device_is_a_no_op
from pp_demo.core import build_model
from pp_demo.instruments.engine.run import Case
from pp_demo.silent_imports import import_quietly, quiet
from pp_demo.verify.tolerances import DTYPES, tolerance
from pp_demo.verify.where_pooled import per_position_logits, pooled_positions_of

__all__ = ["ENGINE_ATTENTION", "prepare_colossalai", "plugin_for", "run_cases", "main"]

# fp16 (one of tolerances.DTYPES) is the plugin's default on GPUs; its grad scaler asks the
# accelerator for a device count (dynamic_grad_scaler.py:41), so fp16 training needs a GPU.
# GPT-2 as beside ColossalAI's forwards (FORWARD_ATTENTION); ColossalAI's OPT
# policy knows only "eager" and "flash_attention_2" (policies/opt.py:55-62): both eager.
ENGINE_ATTENTION = {**FORWARD_ATTENTION, "opt": "eager"}
Tensors = dict[str, torch.Tensor]  # a batch, or gradients by parameter name


def prepare_colossalai(rank: int, world_size: int, backend: str, timeout_s: float) -> Any:
    """Join the process group and import ColossalAI as the engine needs it on this machine.

    torch 2.13 has no ``torch.distributed.is_hccl_available``, which ColossalAI 0.5.0's
    ``pipeline/p2p.py:159`` calls before its first send; a CPU (or NCCL) process has no HCCL,
    so ``False`` is the true answer. The group is made here, not by ``colossalai.launch``, so
    that the backend (gloo here, NCCL on GPUs) and the timeout are the caller's.
    """
    if not hasattr(dist, "is_hccl_available"):
        setattr(dist, "is_hccl_available", lambda: False)  # noqa: B010 - torch's stubs lack it
    if not dist.is_initialized():
        dist.init_process_group(backend, rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout_s))
    colossalai = import_quietly("colossalai")
    import_quietly("colossalai.booster")
    logging.getLogger("colossalai").setLevel(logging.ERROR)
    accelerator = import_quietly("colossalai.accelerator").get_accelerator()
    if accelerator.support_set_device and backend == "nccl":
        accelerator.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    return colossalai


def plugin_for(schedule: str, precision: str, microbatch_size: int) -> Any:
    """The plugin for one schedule; interleaved with ``overlap_p2p=False`` (the default hangs on
    gloo: docs/colossalai-interleaved-hang.md)."""
    plugins = import_quietly("colossalai.booster.plugin")
    settings = dict(
        tp_size=1, pp_size=2, precision=precision, microbatch_size=microbatch_size, enable_metadata_cache=False
    )
    if schedule == "interleaved":
        settings.update(pp_style="interleaved", num_model_chunks=2, overlap_p2p=False)
    with quiet():
        return plugins.HybridParallelPlugin(**settings)


@contextlib.contextmanager
def _recording_sends(log: list[str]) -> Iterator[None]:
    """What this rank sends to its peer, as ``"name[shape]"`` strings, while the block runs
    (``colossalai.pipeline.p2p._communicate`` carries every send of both schedules)."""
    p2p: Any = sys.modules["colossalai.pipeline.p2p"]
    real = p2p._communicate

    def communicate(*args: Any, **kwargs: Any) -> Any:
        obj = kwargs["object"] if "object" in kwargs else args[0]
        if obj is not None:  # a dict of named tensors (forward), else bare tensors (gradients)
            tensors = obj if isinstance(obj, (list, tuple)) else [obj]
            items = obj.items() if isinstance(obj, dict) else [("tensor", v) for v in tensors]
            log.append(" ".join(sorted(f"{k}{list(v.shape)}" for k, v in items if isinstance(v, torch.Tensor))))
        return real(*args, **kwargs)

    with mock.patch.object(p2p, "_communicate", communicate):
        yield


def _fault(case: Case, rank: int) -> None:
    """A fault the tests inject on one rank: hang (sleep) or die (SIGKILL) mid-case."""
    fault = case.get("fault")
    if fault and fault["rank"] == rank:
        if fault["how"] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(24 * 3600)


def _where(error: BaseException) -> str:
    """The error and the ColossalAI lines it came from (outermost of them, then innermost)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/colossalai/" in f.filename]
    where = [f"{f.filename.rsplit('/colossalai/', 1)[1]}:{f.lineno} ({(f.line or '').strip()})" for f in frames]
    message = " ".join(str(error).split())[:200]
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text + (f" at {' -> '.join(where[-2:])}" if where else "")


def _names(case: Case) -> Case:
    return {k: case[k] for k in ("family", "schedule", "mode")}


def _run_case(case: Case, booster: Any, dtype: torch.dtype, rank: int, world: int) -> Case | None:
    family, training = case["family"], case["mode"] == "training"
    model = build_model(family, attn_implementation=ENGINE_ATTENTION.get(family)).to(dtype)
    ids, mask = torch.tensor(case["input_ids"]), torch.tensor(case["attention_mask"])
    batch = {"input_ids": ids, "attention_mask": mask, "labels": torch.arange(len(ids)) % 3}
    reference = copy.deepcopy(model)  # model.forward's output on the whole batch, its gradients when training
    with torch.set_grad_enabled(training):
        expected = reference(**batch, use_cache=False)
    if training:
        expected.loss.backward()
    grads: Tensors = {n: p.grad for n, p in reference.named_parameters() if p.grad is not None}
    engine_model = copy.deepcopy(model).train(training)
    optimizer = torch.optim.SGD(engine_model.parameters(), lr=0.0) if training else None
    try:  # booster.boost's model and optimizer, or why the plugin refused this model
        with quiet():
            pair, refused = booster.boost(engine_model, optimizer), None
    except Exception as error:  # reported as the case's result, on every rank
        pair, refused = None, _where(error)
    refusals = [None] * world
    dist.all_gather_object(refusals, refused)  # every rank skips the case, or none does
    if any(refusals):
        return {**_names(case), "cannot run": next(r for r in refusals if r)} if rank == world - 1 else None
    out, every, evidence = _execute(booster, pair, batch, case, grads)
    if rank != world - 1:
        return None
    logits = out["outputs"]["logits"].detach()
    atol = tolerance(logits.device, dtype)  # the device the engine computed on
    logits = logits.cpu()
    every_position = per_position_logits(model, ids, mask)
    difference = (logits.float() - expected.logits.detach().float()).abs().amax(-1)
    return {
        **_names(case),
        "matches": (difference <= atol).tolist(),
        "logit difference": difference.tolist(),
        "pooled": pooled_positions_of(every_position, logits, atol),
        "loss": float(out["loss"]),
        "model.forward loss": float(expected.loss.detach()),
        "largest gradient difference": max(float(e[0]) for e in every) if training else None,
        "parameters with a gradient": int(sum(float(e[1]) for e in every)) if training else None,
        "parameters": sum(1 for _ in model.parameters()),
        "tolerance": atol,
        "evidence": evidence,
    }


def _execute(booster: Any, pair: Any, batch: Tensors, case: Case, grads: Tensors) -> tuple[Any, list[Any], list[Any]]:
    """One step of ColossalAI's schedule on the boosted model; every rank's largest gradient
    difference and count, and what each rank sent and its stage received."""
    training, rank, world = case["mode"] == "training", dist.get_rank(), dist.get_world_size()
    boosted, optimizer = pair[0], pair[1]
    sent: list[str] = []
    received: list[list[str]] = []  # the keyword arguments each call of this stage's forward received
    hook = boosted.unwrap().register_forward_pre_hook(lambda m, a, kw: received.append(sorted(kw)), with_kwargs=True)
    _fault(case, rank)
    try:
        # quiet: ColossalAI warns on every call (return_outputs' memory, use_cache), and torch
        # about a deprecated pytree call inside p2p.py; a torchrun user would read them as errors
        with _recording_sends(sent), cuda_set_device_is_a_no_op(), torch.set_grad_enabled(training), quiet():
            out = booster.execute_pipeline(
                iter([batch]), boosted, lambda o, _: o.loss, optimizer, return_loss=True, return_outputs=True
            )
    finally:
        hook.remove()
    # over this stage's parameters with a gradient (none without training, ``grads`` empty)
    differences = [
        float((p.grad.float().cpu() - grads[n].float()).abs().max())
        for n, p in boosted.unwrap().named_parameters()
        if p.grad is not None and n in grads
    ]
    summary = torch.tensor([max(differences, default=0.0), float(len(differences))], dtype=torch.float64)
    every = [torch.zeros_like(summary) for _ in range(world)]
    dist.all_gather(every, summary)
    evidence = [None] * world
    dist.all_gather_object(evidence, {"sent": sent, "received": received})
    return out, every, evidence


def run_cases(
    cases: list[Case], dtype_name: str, rank: int, world: int, on_record: Callable[[int, Case], None]
) -> None:
    """Every case on this rank, in order; the last rank hands each record to ``on_record``."""
    dtype = DTYPES[dtype_name]
    booster_module = sys.modules["colossalai.booster"]
    for index, case in enumerate(cases):
        torch.manual_seed(0)
        # A plugin per case, with process groups of its own: an interleaved training step on
        # a plugin that ran an interleaved forward-only step before waits forever in
        # p2p.py:320 / :346 (measured), as if a message of the earlier run were still due.
        plugin = plugin_for(case["schedule"], dtype_name, case["microbatch_size"])
        booster = booster_module.Booster(plugin=plugin)
        record = _run_case(case, booster, dtype, rank, world)
        if record is not None:
            on_record(index, record)


def _write(path: pathlib.Path, data: Any) -> None:
    """Whole or absent: the parent may read the file at any moment."""
    path.with_suffix(".tmp").write_text(json.dumps(data))
    os.replace(path.with_suffix(".tmp"), path)


def main(job_path: str, out_dir: str) -> None:
    torch.set_num_threads(1)
    # the parent asks a rank that does not finish in time where it is before stopping it; to a
    # file of its own, since quiet() points file descriptor 2 at the null device during a step
    stacks = open(pathlib.Path(out_dir) / f"stack{os.environ['RANK']}.txt", "w")  # noqa: SIM115 - open for life
    faulthandler.register(signal.SIGUSR1, file=stacks)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    job = json.loads(pathlib.Path(job_path).read_text())
    out = pathlib.Path(out_dir)
    try:
        colossalai = prepare_colossalai(rank, world, job["backend"], job["timeout_s"])
        _write(out / f"ready{rank}.json", {"colossalai.__file__": str(pathlib.Path(colossalai.__file__).resolve())})
        run_cases(job["cases"], job["dtype"], rank, world, lambda i, r: _write(out / f"case{i}.json", r))
    except BaseException as error:
        cause = error
        while cause.__cause__ is not None:
            cause = cause.__cause__
        _write(out / f"error{rank}.json", _where(cause))
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:3])
