"""A peer in ``python -m pp_demo bench``: ColossalAI's plugin doing the same training step.

Same Llama-shaped model and batch as the benchmark (``pp_demo.bench.work.BenchSize``), the same
m micro-batches, 1F1B, fp32, gloo, one thread per rank, two ranks: ``HybridParallelPlugin(
pp_size=2)`` + ``booster.execute_pipeline``. Timed from inside the ranks, so imports and start-up
are excluded: each step starts after a barrier, and its time is the slower rank's; the fastest
of ``repeats`` steps after ``warmup`` counts, as for pp_demo's rows. ``peer_rows`` sets each time
beside the benchmark's one-process baseline and pp_demo's torch-pipelining row for the same m.

Run as ``python -m pp_demo.bench.colossalai_peer JOB OUT`` on each rank (``engine.start_ranks``).
"""

import json
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

__all__ = ["time_colossalai", "peer_rows", "bench_peer", "peer_lines", "main"]

MODE = "training"


def _step_times(size: dict[str, Any], m: int, warmup: int, repeats: int, rank: int, world: int) -> list[float]:
    import torch
    import torch.distributed as dist

    from pp_demo.bench.work import BenchSize
    from pp_demo.colossalai.engine_worker import plugin_for
    from pp_demo.quiet import quiet

    bench = BenchSize(**size)
    model = bench.model().train()
    ids, mask, labels = bench.batch_tensors()
    batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    booster = sys.modules["colossalai.booster"].Booster(plugin=plugin_for("1f1b", "fp32", len(ids) // m))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    with quiet():
        boosted, optimizer, *_ = booster.boost(model, optimizer)
    times = []
    for _ in range(warmup + repeats):
        dist.barrier()
        start = time.perf_counter()
        booster.execute_pipeline(iter([batch]), boosted, lambda out, _: out.loss, optimizer, return_loss=True)
        optimizer.zero_grad()
        took = torch.tensor([time.perf_counter() - start])
        dist.all_reduce(took, op=dist.ReduceOp.MAX)  # the step ends when the slower rank is done
        times.append(float(took))
    return times[warmup:]


def main(job_path: str, out_dir: str) -> None:
    import torch

    from pp_demo.colossalai.engine_worker import prepare_colossalai

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    job = json.loads(pathlib.Path(job_path).read_text())
    prepare_colossalai(rank, world, "gloo", job["timeout_s"])
    result = {str(m): _step_times(job["size"], m, job["warmup"], job["repeats"], rank, world) for m in job["m"]}
    if rank == world - 1:
        (pathlib.Path(out_dir) / "bench.json").write_text(json.dumps(result))


def time_colossalai(
    size: dict[str, Any], micro_batches: tuple[int, ...], warmup: int, repeats: int, timeout_s: float = 1800
) -> dict[int, float]:
    """``{m: fastest step in seconds}`` of ColossalAI's plugin on two ranks (one start for all m)."""
    from pp_demo.colossalai.engine import start_ranks, stop_ranks

    with tempfile.TemporaryDirectory(prefix="pp_demo_bench_") as name:
        folder = pathlib.Path(name)
        job = folder / "job.json"
        spec = {"size": size, "m": list(micro_batches), "warmup": warmup, "repeats": repeats, "timeout_s": timeout_s}
        job.write_text(json.dumps(spec))
        processes = start_ranks(None, job, folder, 2, "pp_demo.bench.colossalai_peer")
        deadline = time.monotonic() + timeout_s
        try:
            while not (folder / "bench.json").exists():
                if any(p.poll() not in (None, 0) for p in processes) or time.monotonic() > deadline:
                    raise RuntimeError("ColossalAI's benchmark ranks failed or did not finish; both were stopped")
                time.sleep(0.2)
        finally:
            stop_ranks(processes)
        times = json.loads((folder / "bench.json").read_text())
    return {int(m): round(min(t), 4) for m, t in times.items()}


def peer_rows(colossalai_s: dict[int, float], one_process_s: dict[str, float], rows: list[dict[str, Any]]) -> list[Any]:
    """One row per m: ColossalAI's step, the one-process baseline (the best of the whole batch and
    the m micro-batches in turn, as for pp_demo's rows), pp_demo's two-rank row, and the ratios."""
    out = []
    for m, seconds in sorted(colossalai_s.items()):
        baseline = min(one_process_s[f"{MODE}/0"], one_process_s[f"{MODE}/{m}"])
        ours = next((r for r in rows if (r["p"], r["m"], r["mode"]) == (2, m, MODE)), None)
        out.append(
            {
                "engine": "colossalai HybridParallelPlugin 1f1b",
                "p": 2,
                "m": m,
                "mode": MODE,
                "colossalai_s": seconds,
                "baseline_s": baseline,
                "speedup": round(baseline / seconds, 4),
                "pp_demo_s": ours["pipeline_s"] if ours else None,
                "colossalai_over_pp_demo": round(seconds / ours["pipeline_s"], 4) if ours else None,
            }
        )
    return out


def bench_peer(
    size: Any,
    micro_batches: tuple[int, ...],
    warmup: int,
    repeats: int,
    one_process_s: dict[str, float],
    rows: list[dict[str, Any]],
    progress: Any,
) -> list[Any]:
    """The peer rows for ``run_bench``; none (said by ``progress``) without ColossalAI."""
    import importlib.util

    spec = importlib.util.find_spec("colossalai")
    if spec is None or spec.origin is None:  # a folder of that name on the path is no ColossalAI
        progress("ColossalAI is not installed (make colossalai): no ColossalAI row")
        return []
    progress(f"ColossalAI's plugin on 2 ranks (1F1B training step), m = {', '.join(map(str, micro_batches))} ...")
    return peer_rows(time_colossalai(size.as_dict(), micro_batches, warmup, repeats), one_process_s, rows)


def peer_lines(peers: list[dict[str, Any]]) -> list[str]:
    """The peer rows as the benchmark prints them (nothing when there are none)."""
    if not peers:
        return []
    lines = ["ColossalAI's plugin (1F1B, 2 ranks, training step) beside pp_demo's torch pipelining:"]
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
