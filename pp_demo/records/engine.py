"""ColossalAI's engine run, ``results/colossalai_engine.json``, read back: what notebook 06 prints.

The run itself (``python -m pp_demo colossalai-engine``, ``pp_demo.instruments.engine``) writes
the file, and prints ``verdict_lines`` as it goes. Two rank starts per tree take longer than a
notebook cell may, so the notebook reads the committed record.
"""

from collections.abc import Mapping
from typing import Any

from pp_demo import output_paths

__all__ = ["RESULTS", "case_name", "verdict_lines", "summary_lines"]

# the committed run of every family, schedule, mode and sdist tree, found from the working directory
RESULTS = output_paths.in_checkout(output_paths.RESULTS / "colossalai_engine.json")


def case_name(case: Mapping[str, Any]) -> str:
    """A case (or its record) as one line names it: ``llama 1f1b training``."""
    return f"{case['family']} {case['schedule']} {case['mode']}"


def _loss_equal(record: dict[str, Any]) -> bool:
    return bool(abs(record["loss"] - record["model.forward loss"]) <= record["tolerance"])


def verdict_lines(record: dict[str, Any]) -> list[str]:
    """Two lines per case: where the rows match ``model.forward``; the loss and gradients."""
    if "cannot run" in record:
        return [f"{case_name(record):<32} cannot run on the plugin:", f"    {record['cannot run']}"]
    first = f"{case_name(record):<32} row matches model.forward: {record['matches']}"
    loss = "equal" if _loss_equal(record) else "differs"
    second = f"    loss {record['loss']:.6f} (model.forward {record['model.forward loss']:.6f}): {loss}"
    if record["largest gradient difference"] is not None:
        grads = "equal" if record["largest gradient difference"] <= record["tolerance"] else "differ"
        second += f"; gradients {grads} (up to {record['largest gradient difference']:.1e})"
    return [first, second]


def _cell(record: dict[str, Any]) -> str:
    rows = "".join("TF"[not m] for m in record["matches"])
    loss = "=" if _loss_equal(record) else "x"
    grads = "=" if record["largest gradient difference"] <= record["tolerance"] else "x"
    return f"{rows:<5}{loss:<5}{grads}"


def summary_lines(runs: dict[str, Any]) -> list[str]:
    """One line per family and schedule, one column per tree, from the training step's record
    (its logits are the inference run's too): rows matching model.forward (T/F), then the loss
    and the gradients, ``=`` equal to model.forward's within the tolerance, ``x`` not."""
    trees = list(runs)
    lines = [
        f"{'':<20}" + "".join(f"{t:<20}" for t in trees),
        f"{'family schedule':<20}" + f"{'rows loss grads':<20}" * len(trees),
    ]
    done = {
        t: {(r["family"], r["schedule"]): r for r in run["records"] if r["mode"] == "training"}
        for t, run in runs.items()
    }
    for key in done[trees[0]]:
        cells = [_cell(done[t][key]) if key in done[t] else "not run" for t in trees]
        lines.append(f"{' '.join(key):<20}" + "".join(f"{c:<20}" for c in cells))
    return [line.rstrip() for line in lines]
