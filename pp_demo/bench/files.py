"""What ``python -m pp_demo bench`` refuses before it times anything: sizes the bench's model
cannot take, said in the flags' own words, and output files it could not write or should not
replace (``pp_demo.output_paths``). Checked first, since a run takes minutes."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pp_demo.errors import BadInput
from pp_demo.output_paths import SCRATCH, check_not_fewer, output_path

__all__ = ["check_bench_sizes", "timed_runs", "bench_files"]


def check_bench_sizes(hidden: int, layers: int, stages: Sequence[int]) -> None:
    """Each stage holds at least one layer, a pipeline has two stages or more, and the bench's
    Llama has 8 attention heads (``pp_demo.bench.one_process.BenchSize``)."""
    if layers < 2:
        raise BadInput(f"--layers {layers}: a pipeline needs 2 layers or more (one per stage); give --layers 2 or more")
    for p in stages:
        if not 2 <= p <= layers:
            raise BadInput(
                f"--stages {p} with --layers {layers}: each stage holds at least one layer, so give --stages "
                f"from 2 to {layers} (or more --layers)"
            )
    if hidden % 8:
        raise BadInput(f"--hidden {hidden}: the bench's model has 8 attention heads: give a multiple of 8")


def timed_runs(stages: Sequence[int], micro_batches: Sequence[int], repeats: int) -> int:
    """How many timed runs a bench record holds."""
    return len(stages) * len(micro_batches) * repeats


def _record_runs(record: dict[str, Any]) -> int:
    settings = record["settings"]
    return timed_runs(settings["stages"], settings["micro_batches"], settings["repeats"])


def bench_files(out: str | None, runs: int, force: bool) -> tuple[Path, Path]:
    """The record and the figure ``--out out`` names (``OUT.json`` and ``OUT.png``, or
    ``bench_cpu.json`` and ``.png`` in a folder; default ``results/tmp/bench_cpu``), checked:
    writable, and not a record of more timed runs than ``runs`` unless ``force``."""
    json_path = output_path(out or SCRATCH / "bench_cpu", "bench_cpu.json").with_suffix(".json")
    png_path = output_path(json_path.with_suffix(".png"), "bench_cpu.png")
    check_not_fewer(json_path, "timed runs", runs, _record_runs, force)
    return json_path, png_path
