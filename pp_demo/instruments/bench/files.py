"""Where ``python -m pp_demo bench`` writes, checked before it times anything, since a run takes
minutes: output files it could not write or should not replace (``pp_demo.output_paths``). The
sizes it cannot take are refused by ``pp_demo.instruments.bench.check_bench``."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pp_demo.output_paths import SCRATCH, check_not_fewer, output_path

__all__ = ["timed_runs", "bench_files"]


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
