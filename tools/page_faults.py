"""Minor page faults per stage forward: pp_demo's ranks against one process, glibc's default malloc
against the benchmark's fixed thresholds (``pp_demo.instruments.bench.allocator``).

``python -m tools.page_faults`` runs the benchmark's model (``BenchSize()``) at inference, m = 2, 4
and 8 micro-batches: on two ranks, the faults of each forward of the last step (of three, after one
warm-up); in one process, the same m micro-batches through the same two stage modules in turn. Each
first with glibc's default thresholds, then with the fixed ones. A count, not a time: what the
kernel did for each forward, which the machine's other work barely moves (a kernel reclaiming memory
under pressure may add faults, never remove them). Writes ``results/tmp/page_faults.json``
(``--out results/page_faults.json`` replaces the committed count) and prints a table; the findings
in docs/results.md are read from that file.
"""

import argparse
import multiprocessing
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from pp_demo.instruments.bench.allocator import MALLOC_THRESHOLDS, fix_malloc_thresholds
from pp_demo.instruments.bench.one_process import BenchSize
from pp_demo.output_paths import write_json

MICRO_BATCHES = (2, 4, 8)
STEPS = 3


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def _counting(call: Any, counts: list[int]) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        before = _faults()
        try:
            return call(*args, **kwargs)
        finally:
            counts.append(_faults() - before)

    return counted


@dataclass(frozen=True)
class RankFaults:
    """A ``RankJob``: the faults of each stage forward of the last of ``STEPS`` inference steps."""

    n_micro: int
    fixed: bool
    n_stages: int = 2

    def run_on_rank(self, rank: int, world_size: int, cache: Any, device: torch.device) -> Any:
        from pp_demo.ranks.jobs import Job, even_split_points
        from pp_demo.ranks.on_rank import pipeline_step

        if self.fixed:
            fix_malloc_thresholds()
        torch.set_num_threads(1)
        size = BenchSize()
        model, (ids, mask, _) = size.model(), size.batch_tensors()
        job = Job.infer(model, ids, mask, split_points=even_split_points(size.layers, world_size), n_micro=self.n_micro)
        schedule, module = cache.get(job, ids.shape, False)
        module.eval()
        counts: list[int] = []
        schedule._stage.forward_one_chunk = _counting(schedule._stage.forward_one_chunk, counts)
        for _ in range(1 + STEPS):
            counts.clear()
            dist.barrier()
            with torch.no_grad():
                pipeline_step(schedule, rank, world_size, ids, mask, None, [])
        gathered: list[Any] | None = [None] * world_size if rank == world_size - 1 else None
        dist.gather_object(list(counts), gathered, dst=world_size - 1)
        return gathered


def _one_process(n_micro: int, fixed: bool, out: Any) -> None:
    """The same micro-batches through the same two stages in turn: the faults of each stage forward."""
    from pp_demo.core import micro_batches, split_model
    from pp_demo.ranks.jobs import even_split_points

    if fixed:
        fix_malloc_thresholds()
    torch.set_num_threads(1)
    size = BenchSize()
    model, (ids, mask, _) = size.model().eval(), size.batch_tensors()
    first, second = split_model(model, even_split_points(size.layers, 2)).modules
    counts: list[int] = []
    for _ in range(1 + STEPS):
        counts.clear()
        with torch.no_grad():
            for rows in micro_batches(size.batch, n_micro):
                before = _faults()
                sent = first(ids[rows].contiguous(), mask[rows].contiguous())
                middle = _faults()
                second(*sent)
                counts += [middle - before, _faults() - middle]
    out.put([counts[0::2], counts[1::2]])  # per stage, like the ranks


def measure(n_micro: int, fixed: bool) -> dict[str, Any]:
    from pp_demo.ranks.runner import run

    context: Any = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=_one_process, args=(n_micro, fixed, out))
    child.start()
    one_process = out.get(timeout=600)
    child.join()
    ranks = run([RankFaults(n_micro, fixed)], on="ranks", timeout_s=600)
    assert ranks is not None
    return {"m": n_micro, "malloc": "fixed" if fixed else "default", "ranks": ranks[0], "one_process": one_process}


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| m | malloc | rank 0, per forward | rank 1, per forward | one process, stage 0 | one process, stage 1 |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [", ".join(map(str, counts)) for counts in (*row["ranks"], *row["one_process"])]
        lines.append(f"| {row['m']} | {row['malloc']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.page_faults", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        default="results/tmp/page_faults.json",
        help="where to write (default: %(default)s; --out results/page_faults.json replaces the committed count)",
    )
    args = parser.parse_args(argv)
    from pp_demo.ranks.launch import prepare_fork_server

    prepare_fork_server()
    rows = [measure(m, fixed) for fixed in (False, True) for m in MICRO_BATCHES]
    record = {"size": BenchSize().as_dict(), "steps": STEPS, "thresholds": MALLOC_THRESHOLDS, "rows": rows}
    write_json(Path(args.out), record)
    print(format_table(rows))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
