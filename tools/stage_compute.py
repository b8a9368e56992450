"""One micro-batch through the same weights three ways, interleaved in one process: does pp_demo's
stage split, or ColossalAI's pipeline forward, cost more compute than ``model.forward``?

The benchmark times each engine on its own ranks, at its own moment, so on a noisy machine a
difference between their forward columns may be the machine's. Here the three run in turn, call
after call, in one process with one thread and the benchmark's malloc thresholds, on the benchmark's
model (``BenchSize()``) and the rows of one micro-batch at m = 2, 4, 8:

- ``model.forward``: transformers' own forward;
- ``pp_demo``: the two stages of ``split_model`` (the ranks' modules), called in order;
- ``colossalai``: ColossalAI 0.5.0's ``llama_for_sequence_classification_forward`` on a one-stage
  pipeline (``pp_demo.colossalai.forwards``), the code its ranks run;

each at inference and as a training micro-batch (forward, cross-entropy, backward). Reported per
variant: the median thread CPU time over ``--calls`` calls after a warm-up, and the median of its
call-by-call ratios to ``model.forward``'s (and pp_demo's to ColossalAI's): neighbouring calls share
the machine's state of the moment, so a ratio of neighbours is steadier than one of medians, though
not exact on a noisy machine: the spread of the ratios over m shows how far. Writes
``results/tmp/stage_compute.json`` (``--out results/stage_compute.json`` replaces the committed one)
and prints a table; docs/results.md reads its findings from that file.
"""

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from pp_demo.instruments.bench.allocator import fix_malloc_thresholds
from pp_demo.instruments.bench.one_process import BenchSize
from pp_demo.output_paths import write_json

MICRO_BATCHES = (2, 4, 8)
VARIANTS = ("model.forward", "pp_demo", "colossalai")
MODES = ("inference", "training")


def _variants(model: Any) -> dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]:
    """Each variant as ``logits(input_ids, attention_mask)``, on the same weights; gradients as the caller has them."""
    from pp_demo.colossalai.forwards import call_one_stage, pipeline_forward
    from pp_demo.core import count_layers, split_model
    from pp_demo.ranks.jobs import even_split_points

    layers, forward = count_layers(model), pipeline_forward("llama")
    stages = split_model(model, even_split_points(layers, 2))

    def colossalai(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return call_one_stage(forward, model, layers, ids, mask, grad=torch.is_grad_enabled()).logits  # type: ignore[no-any-return]

    return {
        "model.forward": lambda ids, mask: model(input_ids=ids, attention_mask=mask).logits,
        "pp_demo": stages.logits,
        "colossalai": colossalai,
    }


def _call(logits: Callable[..., torch.Tensor], mode: str, ids: torch.Tensor, mask: torch.Tensor, labels: Any) -> float:
    """One call's thread CPU seconds."""
    start = time.thread_time()
    if mode == "training":
        F.cross_entropy(logits(ids, mask), labels).backward()
    else:
        with torch.no_grad():
            logits(ids, mask)
    return time.thread_time() - start


def measure(calls: int, warmup: int, say: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """A row per (m, mode): each variant's median CPU seconds and the paired ratios of ``_summary``."""
    fix_malloc_thresholds()
    torch.set_num_threads(1)
    size = BenchSize()
    model = size.model()
    ids, mask, labels = size.batch_tensors()
    variants = _variants(model)
    with torch.no_grad():  # the same work: pp_demo's stages give model.forward's logits (ColossalAI 0.5.0's
        # differ on left-padded rows, the bug this workbook is about: the same compute, pooled elsewhere)
        assert torch.allclose(variants["pp_demo"](ids, mask), variants["model.forward"](ids, mask), atol=1e-5)
    rows = []
    for m in MICRO_BATCHES:
        rows_of_one = slice(0, size.batch // m)  # the first micro-batch: half of its rows left-padded
        batch = (ids[rows_of_one].contiguous(), mask[rows_of_one].contiguous(), labels[rows_of_one])
        for mode in MODES:
            model.train(mode == "training")
            say(f"m = {m}, {mode}: {len(VARIANTS)} variants in turn, {warmup} + {calls} calls each ...")
            times: dict[str, list[float]] = {name: [] for name in VARIANTS}
            for k in range(warmup + calls):
                for name in VARIANTS if k % 2 else reversed(VARIANTS):  # neither always first
                    model.zero_grad(set_to_none=True)
                    seconds = _call(variants[name], mode, *batch)
                    if k >= warmup:
                        times[name].append(seconds)
            rows.append({"m": m, "rows": size.batch // m, "mode": mode, **_summary(times)})
    return rows


def _summary(times: dict[str, list[float]]) -> dict[str, Any]:
    """Each variant's median CPU time, and the median of its call-by-call ratio to ``model.forward``
    and of pp_demo's to ColossalAI's: calls next to each other share the machine's state of the moment."""

    def paired(a: str, b: str) -> float:
        return round(statistics.median(x / y for x, y in zip(times[a], times[b], strict=True)), 3)

    return {
        "cpu_ms": {name: round(1000 * statistics.median(t), 2) for name, t in times.items()},
        "over_model_forward": {name: paired(name, "model.forward") for name in VARIANTS},
        "pp_demo_over_colossalai": paired("pp_demo", "colossalai"),
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table docs/results.md shows."""
    head = "| m | rows | mode | " + " | ".join(f"{v}, ms" for v in VARIANTS) + " | pp_demo / model.forward | "
    head += "ColossalAI / model.forward | pp_demo / ColossalAI |"
    lines = [head, "|" + "---|" * (3 + len(VARIANTS) + 3)]
    for row in rows:
        ms = " | ".join(f"{row['cpu_ms'][v]:.1f}" for v in VARIANTS)
        ratios = row["over_model_forward"]
        lines.append(f"| {row['m']} | {row['rows']} | {row['mode']} | {ms} | {ratios['pp_demo']:.3f} | "
                     f"{ratios['colossalai']:.3f} | {row['pp_demo_over_colossalai']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=15, help="timed calls per variant (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first (default: %(default)s)")
    parser.add_argument("--out", default="results/tmp/stage_compute.json", help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    rows = measure(args.calls, args.warmup)
    record = {
        "settings": {"size": BenchSize().as_dict(), "calls": args.calls, "warmup": args.warmup, "threads": 1},
        "statistic": "median thread CPU time of the calls, and median of the ratios of neighbouring calls",
        "versions": {"torch": torch.__version__},
        "rows": rows,
    }
    out = Path(args.out)
    write_json(out, record)
    print(format_table(rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
