"""A peer in ``python -m pp_demo bench``: ColossalAI's plugin doing the same training step.

Same model and batch as the benchmark (``one_process.BenchSize``), the same m micro-batches,
1F1B, fp32, gloo, one thread per rank, two ranks: ``HybridParallelPlugin(pp_size=2)`` with its
defaults (metadata cache on: the shapes never change here, and pp_demo too builds its stages once
per shape) and ``booster.execute_pipeline``. Timed from inside the ranks by the same phases as
pp_demo's (``timers``): each micro-batch's forward (with the loss, which ColossalAI computes
inside it) and backward, and every blocking send and receive; imports, start-up and ``boost`` are
outside the timed steps. Each rank runs ``python -m pp_demo.instruments.bench.colossalai_peer JOB OUT``
(``engine.start_ranks``).
"""

import json
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

from .allocator import fix_malloc_thresholds
from .breakdown import pipeline_row

__all__ = ["ENGINE", "time_colossalai", "peer_rows", "peer_lines", "main"]

MODE = "training"
ENGINE = "colossalai HybridParallelPlugin 1f1b"


# the schedule's methods timed on each rank, as the kinds pp_demo's ranks record (``timers``)
_TIMED = {"forward_step": "F", "backward_step": "B"}
_TIMED |= dict.fromkeys(("recv_forward", "recv_backward", "send_forward", "send_backward"), "W")
_TIMED |= dict.fromkeys(("send_forward_recv_backward", "send_backward_recv_forward"), "W")


def _steps(size: dict[str, Any], m: int, warmup: int, repeats: int) -> list[Any]:
    """This rank's timed steps, each ``(start, end, intervals, cpu)`` as ``timers.Recorder`` records."""
    import torch
    import torch.distributed as dist

    from pp_demo.instruments.bench.one_process import BenchSize
    from pp_demo.instruments.bench.timers import Recorder
    from pp_demo.silent_imports import import_quietly, quiet

    bench = BenchSize(**size)
    torch.manual_seed(0)
    model = bench.model().train()
    batch = dict(zip(("input_ids", "attention_mask", "labels"), bench.batch_tensors(), strict=True))
    with quiet():
        plugin = import_quietly("colossalai.booster.plugin").HybridParallelPlugin(
            tp_size=1, pp_size=2, precision="fp32", microbatch_size=bench.batch // m
        )
        booster = sys.modules["colossalai.booster"].Booster(plugin=plugin)
        boosted, optimizer, *_ = booster.boost(model, torch.optim.SGD(model.parameters(), lr=0.0))
    recorder, schedule = Recorder(), plugin.scheduler
    for name, kind in _TIMED.items():  # on this instance only
        setattr(schedule, name, recorder.timed(kind, getattr(schedule, name)))
    steps = []
    for k in range(warmup + repeats):
        dist.barrier()
        start = recorder.start_step()
        booster.execute_pipeline(iter([batch]), boosted, lambda out, _: out.loss, optimizer, return_loss=True)
        optimizer.zero_grad()
        if k >= warmup:
            steps.append(recorder.end_step(start))
    return steps


def main(job_path: str, out_dir: str) -> None:
    import torch
    import torch.distributed as dist

    from pp_demo.instruments.engine.worker import prepare_colossalai

    fix_malloc_thresholds()  # as in every process the benchmark times
    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    job = json.loads(pathlib.Path(job_path).read_text())
    prepare_colossalai(rank, world, "gloo", job["timeout_s"])
    mine = {str(m): _steps(job["size"], m, job["warmup"], job["repeats"]) for m in job["m"]}
    every: list[Any] = [None] * world
    dist.all_gather_object(every, mine)
    if rank == world - 1:
        out = pathlib.Path(out_dir) / "bench.json"
        out.with_suffix(".tmp").write_text(json.dumps(every))
        os.replace(out.with_suffix(".tmp"), out)  # whole or absent: the caller polls for it


def time_colossalai(
    size: dict[str, Any], micro_batches: tuple[int, ...], warmup: int, repeats: int, timeout_s: float = 1800
) -> dict[int, list[Any]]:
    """``{m: per rank, its timed steps}`` of ColossalAI's plugin on two ranks (one start for all m),
    each step ``(start, end, intervals, cpu)`` as pp_demo's ranks record theirs (``timers``)."""
    from pp_demo.instruments.engine.run import start_ranks, stop_ranks

    with tempfile.TemporaryDirectory(prefix="pp_demo_bench_") as name:
        folder = pathlib.Path(name)
        job = folder / "job.json"
        spec = {"size": size, "m": list(micro_batches), "warmup": warmup, "repeats": repeats, "timeout_s": timeout_s}
        job.write_text(json.dumps(spec))
        processes = start_ranks(None, job, folder, 2, "pp_demo.instruments.bench.colossalai_peer")
        deadline = time.monotonic() + timeout_s
        try:
            while not (folder / "bench.json").exists():
                if any(p.poll() not in (None, 0) for p in processes) or time.monotonic() > deadline:
                    raise RuntimeError("ColossalAI's benchmark ranks failed or did not finish; both were stopped")
                time.sleep(0.2)
        finally:
            stop_ranks(processes)
        every = json.loads((folder / "bench.json").read_text())
    return {m: [rank[str(m)] for rank in every] for m in micro_batches}


def peer_rows(
    steps: dict[int, list[Any]], one_process_s: dict[str, float], rows: list[dict[str, Any]], c: float
) -> list[Any]:
    """One row per m from ColossalAI's timed steps (``time_colossalai``), made as pp_demo's rows are
    (``pipeline_row``), with pp_demo's two-rank training step beside it and the ratio of the two."""
    out = []
    for m, rank_steps in sorted(steps.items()):
        row = pipeline_row(2, m, MODE, "1F1B", rank_steps, one_process_s, c)
        ours = next((r["pipeline_s"] for r in rows if (r["p"], r["m"], r["mode"]) == (2, m, MODE)), None)
        ratio = None if ours is None else round(row["pipeline_s"] / ours, 4)
        beside = {"colossalai_s": row["pipeline_s"], "pp_demo_s": ours, "colossalai_over_pp_demo": ratio}
        out.append({"engine": ENGINE, **row, **beside})
    return out


def peer_lines(peers: list[dict[str, Any]]) -> list[str]:
    """The peer rows as the benchmark prints them (nothing when there are none)."""
    lines = ["ColossalAI's plugin (1F1B, 2 ranks, training step) beside pp_demo's torch pipelining:"] if peers else []
    for row in peers:
        ours = "" if row["pp_demo_s"] is None else f", pp_demo {row['pp_demo_s']:.3f} s (ColossalAI/pp_demo "
        ours += "" if row["pp_demo_s"] is None else f"{row['colossalai_over_pp_demo']:.2f})"
        lines.append(
            f"  m = {row['m']}: ColossalAI {row['colossalai_s']:.3f} s, speedup over one process "
            f"{row['speedup']:.2f}{ours}"
        )
    return lines


if __name__ == "__main__":
    main(*sys.argv[1:3])
