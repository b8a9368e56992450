"""The in-process pipeline's time against ``model.forward`` on the same batch: its overhead per call.

Two stages and two micro-batches do the model's own work, so on a GPU, where the work is large,
the pipeline in one process should take about what ``model.forward`` takes; a larger ratio is
work done per call that a run needs once (the stage split, reads of device values, logits sent
to the CPU and back). This prints the ratio per family (the median of timed calls after
warm-up, the GPU synchronised around each). A measurement, never a test: the tests only check
that it runs and prints its lines. On the CPU it runs on the tiny models, in seconds.
"""

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from pp_demo.core import FAMILIES, FIX, PAD, build_model, pipeline_logits
from pp_demo.errors import BadInput
from pp_demo.verify.compare import forward_logits
from pp_demo.verify.real_size import N_MICRO, SIZES, build_shaped, left_padded_batch

__all__ = ["SPEED_SIZES", "Speed", "speed_size", "time_calls", "measure", "run_speed", "speed_line"]

SPEED_SIZES = ("tiny", "small", "real")
"""tiny: the workbook's tiny models, 8 rows x 32 tokens; small and real: ``pp_demo.verify.real_size``'s."""


@dataclass(frozen=True)
class Speed:
    family: str
    size: str
    forward_s: float
    pipeline_s: float

    @property
    def ratio(self) -> float:
        return self.pipeline_s / self.forward_s


def speed_size(size: str | None, device: str) -> str:
    """real on a GPU, tiny on the CPU; the real size on the CPU is refused (minutes per call)."""
    on_cpu = torch.device(device).type == "cpu"
    if size == "real" and on_cpu:
        raise BadInput("--size real on the CPU times 1B-parameter models for minutes: use a GPU, or --size small")
    return size or ("tiny" if on_cpu else "real")


def time_calls(call: Callable[[], Any], device: torch.device, warmup: int, repeats: int) -> float:
    """The median seconds of ``repeats`` calls after ``warmup`` untimed ones; on a GPU each call
    is timed from an idle device to an idle device."""

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _model_and_batch(family: str, size: str, device: str, dtype: torch.dtype) -> tuple[Any, torch.Tensor, torch.Tensor]:
    if size == "tiny":
        model = build_model(family).to(device=device, dtype=dtype)
        ids, mask = left_padded_batch(8, 32, model.config.vocab_size, PAD, device)
        return model, ids, mask
    rows, seq, shapes = SIZES[size]
    model = build_shaped(family, shapes[family][1], device, dtype)
    return (model, *left_padded_batch(rows, seq, model.config.vocab_size, PAD, device))


def measure(family: str, size: str, device: str, dtype: torch.dtype, warmup: int, repeats: int) -> Speed:
    """``model.forward`` and the in-process pipeline (the fix, split at the middle layer, 2
    micro-batches) on one left-padded batch, timed alike."""
    if family not in FAMILIES:
        raise BadInput(f"unsupported family {family!r}; supported: {', '.join(FAMILIES)}")
    model, ids, mask = _model_and_batch(family, size, device, dtype)
    where = torch.device(device)
    with torch.no_grad():
        forward_s = time_calls(lambda: forward_logits(model, ids, mask), where, warmup, repeats)
        pipeline_s = time_calls(
            lambda: pipeline_logits(model, ids, mask, rule=FIX, n_micro=N_MICRO), where, warmup, repeats
        )
    return Speed(family, size, forward_s, pipeline_s)


def speed_line(speed: Speed) -> str:
    return (
        f"{speed.family} ({speed.size}): model.forward {speed.forward_s * 1e3:.2f} ms, in-process pipeline "
        f"{speed.pipeline_s * 1e3:.2f} ms (2 stages, {N_MICRO} micro-batches): ratio {speed.ratio:.2f}"
    )


def run_speed(
    families: Sequence[str],
    size: str,
    device: str,
    dtype: torch.dtype,
    warmup: int = 3,
    repeats: int = 10,
    progress: Callable[[str], None] = print,
) -> list[Speed]:
    """Each family in turn, one model in memory at a time, its line printed as it comes. On the
    CPU with one thread: on a small shared machine, thread pools waking make the medians noise."""
    speeds = []
    threads = torch.get_num_threads()
    if torch.device(device).type == "cpu":
        torch.set_num_threads(1)
    try:
        for family in families:
            speeds.append(measure(family, size, device, dtype, warmup, repeats))
            progress(speed_line(speeds[-1]))
            if torch.device(device).type == "cuda":
                torch.cuda.empty_cache()
    finally:
        torch.set_num_threads(threads)
    return speeds
