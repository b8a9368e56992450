"""``python -m pp_demo bench``: the two-rank pipeline against one process, honestly timed.

A benchmark, not a test: it prints its figures and writes them to a JSON file and a
PNG plot. For m micro-batches, two stages of equal cost and free communication, GPipe
finishes in m + 1 slots what one process does in 2m: the ideal speedup is 2m/(m+1).

Measured, each with warm-up steps and the median of repeated runs, one thread per
process (the pipeline's two ranks each get one core):
* one process running the whole model on the whole batch (the baseline);
* the two-rank pipeline (``ScheduleGPipe`` for inference, ``Schedule1F1B`` for a
  forward and backward step) for each m;
* and, for honesty about a 2-core machine, one process with two threads.
"""

import os
import platform
import statistics
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .families import build_model
from .stages import even_split_points

__all__ = ["BenchSize", "BenchJob", "run_bench", "format_bench", "draw_bench"]


@dataclass(frozen=True)
class BenchSize:
    """A size where compute dominates communication and per-call overheads."""

    hidden: int = 512
    layers: int = 8
    seq: int = 128
    batch: int = 32
    family: str = "llama"

    def model(self):
        return build_model(self.family, hidden_size=self.hidden, num_hidden_layers=self.layers,
                           intermediate_size=2 * self.hidden, num_attention_heads=8, num_key_value_heads=8,
                           vocab_size=1024, max_position_embeddings=max(64, self.seq))

    def batch_tensors(self):
        generator = torch.Generator().manual_seed(0)
        ids = torch.randint(1, 1024, (self.batch, self.seq), generator=generator)
        ids[: self.batch // 2, : self.seq // 4] = 0          # half the rows left-padded
        return ids, (ids != 0).long(), torch.randint(0, 3, (self.batch,), generator=generator)


def _median_time(step, warmup, repeats, sync=lambda: None):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def single_process_times(size, threads, warmup=1, repeats=3):
    """Seconds per inference and per forward+backward of the whole model and batch."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        model, (ids, mask, labels) = size.model(), size.batch_tensors()

        def infer():
            with torch.no_grad():
                model(input_ids=ids, attention_mask=mask)

        def train():
            model.zero_grad(set_to_none=True)
            F.cross_entropy(model(input_ids=ids, attention_mask=mask).logits, labels).backward()

        return {"inference": _median_time(infer, warmup, repeats), "training": _median_time(train, warmup, repeats)}
    finally:
        torch.set_num_threads(previous)


@dataclass(frozen=True)
class BenchJob:
    """Timed pipeline steps on ``n_stages`` ranks: ``pp_demo.ranks.run_on_rank`` calls
    ``run_on_rank`` on every rank, which times the runner's own step (``pipeline_step``)."""

    size: BenchSize
    n_micro: int
    warmup: int = 1
    repeats: int = 3
    n_stages: int = 2

    def run_on_rank(self, rank, world_size, cache, device):
        from .jobs import Job
        from .ranks import pipeline_step

        model, (ids, mask, labels) = self.size.model().to(device), self.size.batch_tensors()
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        points = even_split_points(self.size.layers, world_size)
        times = {}
        for mode, training in (("inference", False), ("training", True)):
            job = Job.step(model, ids, mask, labels, split_points=points, n_micro=self.n_micro) if training \
                else Job.infer(model, ids, mask, split_points=points, n_micro=self.n_micro)
            schedule, module = cache.get(job, ids.shape, training)
            module.train(training)

            def step():
                pipeline_step(schedule, rank, world_size, ids, mask, labels if training else None, [])

            with torch.set_grad_enabled(training):
                times[mode] = _median_time(step, self.warmup, self.repeats, sync=dist.barrier)
        return times


def run_bench(size=BenchSize(), micro_batches=(1, 2, 4, 8), warmup=1, repeats=3, timeout_s=1800):
    """All measurements as one dict (the JSON file's content)."""
    from .runner import run

    one = single_process_times(size, 1, warmup, repeats)
    two_threads = single_process_times(size, 2, warmup, repeats)
    results = run([BenchJob(size, m, warmup, repeats) for m in micro_batches], on="ranks", timeout_s=timeout_s)
    rows = []
    for m, result in zip(micro_batches, results):
        ideal = 2 * m / (m + 1)
        for mode, seconds in result.items():
            speedup = one[mode] / seconds
            rows.append({"mode": mode, "micro_batches": m, "pipeline_s": seconds, "speedup": speedup,
                         "ideal": ideal, "of_ideal": speedup / ideal})
    return {"size": size.__dict__, "one_process_1_thread_s": one, "one_process_2_threads_s": two_threads,
            "pipeline": rows, "repeats": repeats, "warmup": warmup,
            "machine": {"platform": platform.platform(terse=True), "processor": platform.processor() or platform.machine(),
                        "cpus": os.cpu_count(),
                        "torch": torch.__version__, "python": platform.python_version()}}


def format_bench(result):
    lines = [f"one process, 1 thread:  inference {result['one_process_1_thread_s']['inference']:.3f} s, "
             f"training step {result['one_process_1_thread_s']['training']:.3f} s",
             f"one process, 2 threads: inference {result['one_process_2_threads_s']['inference']:.3f} s, "
             f"training step {result['one_process_2_threads_s']['training']:.3f} s",
             "", f"{'mode':<10} {'m':>2} {'pipeline s':>10} {'speedup':>8} {'ideal':>6} {'of ideal':>8}"]
    for row in result["pipeline"]:
        lines.append(f"{row['mode']:<10} {row['micro_batches']:>2} {row['pipeline_s']:>10.3f} {row['speedup']:>8.2f} "
                     f"{row['ideal']:>6.2f} {row['of_ideal']:>8.2f}")
    return "\n".join(lines)


def draw_bench(result):
    """Speedup over one single-threaded process against m, with the GPipe ideal."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    ms = sorted({row["micro_batches"] for row in result["pipeline"]})
    ax.plot(ms, [2 * m / (m + 1) for m in ms], "k--", label="GPipe ideal 2m/(m+1)")
    for mode, marker in (("inference", "o"), ("training", "s")):
        rows = [r for r in result["pipeline"] if r["mode"] == mode]
        ax.plot([r["micro_batches"] for r in rows], [r["speedup"] for r in rows], marker=marker, label=f"pipeline, {mode}")
        two = result["one_process_1_thread_s"][mode] / result["one_process_2_threads_s"][mode]
        ax.axhline(two, linestyle=":", color=ax.lines[-1].get_color(), label=f"one process, 2 threads, {mode}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ms, [str(m) for m in ms])
    ax.set_xlabel("micro-batches m")
    ax.set_ylabel("speedup over 1 process, 1 thread")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
