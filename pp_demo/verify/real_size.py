"""The bug at real size: the reproduction on the shapes of real checkpoints, nothing downloaded.

The tiny models show the bug in milliseconds; a reader of the issue asks whether it survives
real shapes, half precision and realistic padding. This runs the same two-stage pipeline on a
``*ForSequenceClassification`` shaped like Llama-3.2-1B, Qwen2-0.5B or OPT-1.3B (random weights
drawn on the device, in the run's dtype, so a 1B model is never built in fp32 on the CPU first),
or on a local checkpoint folder, with a left-padded batch whose real lengths spread from a tenth
of the sequence to all of it. Per family it says how many rows the fix and the count rule match
``model.forward`` and by how much the worst one misses. On a CPU the real shapes take minutes
and gigabytes, so the default there is a small shape of the same structure (one line says so);
asking for the real size on a CPU is refused unless forced.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers

from pp_demo.core import FAMILIES, FIX, PAD, pipeline_logits
from pp_demo.errors import BadInput
from pp_demo.silent_imports import quiet
from pp_demo.verify.compare import RowComparison, compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance

__all__ = ["REAL_SHAPES", "SMALL_SHAPES", "SIZES", "RealSizeRun", "left_padded_batch", "build_shaped", "run_real_size"]
__all__ += ["load_checkpoint", "choose_size", "format_run"]

COUNT = "count"  # ColossalAI 0.5.0's rule for these three families: the bug
COMPARED_RULES = (FIX, COUNT)  # the fix and ColossalAI 0.5.0's count rule
N_MICRO = 2
NUM_LABELS = 3

# The published configs' shapes (their config.json), with no weights: what the model computes
# and how much memory it takes, not what it knows. Llama-3.2-1B has 1.24B parameters.
# fmt: off
REAL_SHAPES: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("Llama-3.2-1B", dict(
        hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64,
        intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True, max_position_embeddings=131072,
        rms_norm_eps=1e-5, rope_theta=500000.0,
        rope_scaling=dict(rope_type="llama3", factor=32.0, high_freq_factor=4.0, low_freq_factor=1.0,
                          original_max_position_embeddings=8192))),
    "qwen2": ("Qwen2-0.5B", dict(
        hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
        intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True, max_position_embeddings=32768,
        rms_norm_eps=1e-6, rope_theta=1000000.0, use_sliding_window=False, sliding_window=None)),
    "opt": ("OPT-1.3B", dict(
        hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, ffn_dim=8192, vocab_size=50272,
        max_position_embeddings=2048, word_embed_proj_dim=2048, do_layer_norm_before=True)),
}
# The same structure (grouped heads, OPT's learned positions) at a size a CPU runs in a second.
SMALL_SHAPES: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("small Llama", dict(
        hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=1, intermediate_size=128,
        vocab_size=1024, tie_word_embeddings=True, max_position_embeddings=256)),
    "qwen2": ("small Qwen2", dict(
        hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128,
        vocab_size=1024, tie_word_embeddings=True, max_position_embeddings=256, use_sliding_window=False,
        sliding_window=None)),
    "opt": ("small OPT", dict(
        hidden_size=64, num_hidden_layers=4, num_attention_heads=4, ffn_dim=128, vocab_size=1024,
        max_position_embeddings=256, word_embed_proj_dim=64)),
}
# fmt: on
SIZES = {"real": (8, 1024, REAL_SHAPES), "small": (8, 64, SMALL_SHAPES)}
"""``--size``: rows, tokens per row, and the shapes."""


@dataclass(frozen=True)
class RealSizeRun:
    """One model's run: what it was, the batch's real lengths, and each rule against ``model.forward``."""

    family: str
    shape: str
    parameters: int
    lengths: list[int]
    split_at: int
    comparisons: dict[str, RowComparison]

    @property
    def unpadded_rows(self) -> list[int]:
        return [i for i, n in enumerate(self.lengths) if n == max(self.lengths)]


def left_padded_batch(
    rows: int, seq: int, vocab_size: int, pad: int, device: "str | torch.device", seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` rows of ``seq`` tokens, left-padded to real lengths spread evenly from a tenth of
    ``seq`` to all of it (the last row unpadded), real ids drawn from the vocabulary but the pad id."""
    lengths = torch.linspace(seq / 10, seq, rows).round().long().clamp(1, seq)
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size - 1, (rows, seq), generator=generator)
    ids = ids + (ids >= pad).long()  # every id but the pad id
    mask = (torch.arange(seq) >= (seq - lengths)[:, None]).long()
    ids = torch.where(mask.bool(), ids, torch.full_like(ids, pad))
    return ids.to(device), mask.to(device)


def build_shaped(family: str, shape: dict[str, Any], device: str, dtype: torch.dtype, seed: int = 0) -> Any:
    """A ``*ForSequenceClassification`` of ``shape`` with random weights drawn on ``device`` in
    ``dtype`` (never first in fp32 on the CPU), pad id ``PAD``, in eval mode."""
    row = FAMILIES[family]
    config = getattr(transformers, row.config)(**shape, num_labels=NUM_LABELS, pad_token_id=PAD)
    where = torch.device(device)
    rng_devices = [where.index or 0] if where.type == "cuda" else []
    with torch.random.fork_rng(devices=rng_devices), torch.device(where):
        torch.manual_seed(seed)
        model = getattr(transformers, row.classifier)._from_config(config, torch_dtype=dtype)
    return model.eval()


def load_checkpoint(folder: str, device: str, dtype: torch.dtype) -> tuple[str, Any]:
    """``(family, model)`` of a checkpoint in a local folder (``from_pretrained``, no hub): a
    ``*ForSequenceClassification`` of its family with a new score head of ``NUM_LABELS``."""
    path = Path(folder)
    if not (path / "config.json").is_file():
        raise BadInput(f"--checkpoint {folder}: not a folder holding a config.json (a local checkpoint, no hub)")
    config = transformers.AutoConfig.from_pretrained(path, local_files_only=True)
    family = str(config.model_type)
    if family not in REAL_SHAPES:
        raise BadInput(f"--checkpoint {folder}: a {family} model; the real-size run takes {', '.join(REAL_SHAPES)}")
    pad = config.pad_token_id if config.pad_token_id is not None else PAD
    classifier = getattr(transformers, FAMILIES[family].classifier)
    with quiet():  # the new score head's "newly initialized" warning: the head is random by design
        model = classifier.from_pretrained(
            path, local_files_only=True, num_labels=NUM_LABELS, pad_token_id=pad, torch_dtype=dtype
        )
    return family, model.to(device).eval()


def choose_size(size: str | None, device: str, force: bool) -> tuple[str, str | None]:
    """``(size, the line saying why it shrank or None)``: real on a GPU, small on a CPU unless forced."""
    on_cpu = torch.device(device).type == "cpu"
    if size == "real" and on_cpu and not force:
        raise BadInput(
            "--size real on the CPU builds 0.5-1.3B-parameter models and runs 8 x 1024 tokens through each: "
            "minutes and gigabytes per family; use a GPU, --size small, or add --allow-cpu"
        )
    if size is None and on_cpu:
        return (
            "small",
            "on the CPU the real shapes take minutes: running small shapes (--size real --allow-cpu for real)",
        )
    return size or "real", None


def run_model(family: str, shape: str, model: Any, rows: int, seq: int, seed: int = 0) -> RealSizeRun:
    """Both rules through two stages split at the middle layer, 2 micro-batches, against ``model.forward``."""
    parameter = next(model.parameters())
    pad = model.config.pad_token_id
    ids, mask = left_padded_batch(rows, seq, model.config.vocab_size, pad, parameter.device, seed)
    reference = forward_logits(model, ids, mask)
    atol = tolerance(parameter.device, parameter.dtype)
    comparisons = {}
    with torch.no_grad():
        for rule in COMPARED_RULES:
            logits = pipeline_logits(model, ids, mask, rule=rule, n_micro=N_MICRO)
            comparisons[rule] = compare_rows(logits, reference, atol)
    lengths = [int(n) for n in mask.sum(-1).tolist()]
    layers = int(model.config.num_hidden_layers)
    return RealSizeRun(family, shape, sum(p.numel() for p in model.parameters()), lengths, layers // 2, comparisons)


def run_real_size(
    families: Sequence[str],
    size: str,
    device: str,
    dtype: torch.dtype,
    checkpoint: str | None = None,
    progress: Callable[[str], None] = print,
) -> list[RealSizeRun]:
    """Each family's run (or the checkpoint's), one model in memory at a time, a line before each."""
    rows, seq, shapes = SIZES[size]
    runs = []
    if checkpoint is not None:
        family, model = load_checkpoint(checkpoint, device, dtype)
        progress(f"{family}: the checkpoint in {Path(checkpoint).name}, {rows} rows x {seq} tokens ...")
        runs.append(run_model(family, f"checkpoint {Path(checkpoint).name}", model, rows, seq))
        progress(format_run(runs[-1]))
        return runs
    for family in families:
        name, shape = shapes[family]
        progress(f"{family}: building a {name}-shaped model on {device} ...")
        model = build_shaped(family, shape, device, dtype)
        runs.append(run_model(family, name, model, rows, seq))
        del model
        if torch.device(device).type == "cuda":
            torch.cuda.empty_cache()
        progress(format_run(runs[-1]))
    return runs


def _billions(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e8 else f"{n / 1e6:.2f}M"


def format_run(run: RealSizeRun) -> str:
    """Two lines per rule under one heading: rows matched of all rows (which), and the largest difference."""
    n = len(run.lengths)
    head = (
        f"{run.family} ({run.shape}, {_billions(run.parameters)} parameters): {n} rows x {max(run.lengths)} tokens, "
        f"real lengths {min(run.lengths)}..{max(run.lengths)} (unpadded rows {run.unpadded_rows}), "
        f"2 stages split at layer {run.split_at}, {N_MICRO} micro-batches"
    )
    lines = [head]
    for rule, comparison in run.comparisons.items():
        matched = [i for i, ok in enumerate(comparison.matches) if ok]
        worst = max(comparison.max_abs_diff)
        lines.append(
            f"  {run.family} {rule}: {len(matched)}/{n} rows match model.forward {matched}, "
            f"largest difference {worst:.3g} (tolerance {comparison.atol:g})"
        )
    return "\n".join(lines)
