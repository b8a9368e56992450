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

A checkpoint folder goes through the checker's checkpoint door (``load_model``, as ``check
--model-path``), so a broken folder gets the same one line. Two checks the door leaves to the
caller come first and after: the family is read from ``config.json`` itself (transformers would
guess it from the folder's name), and every weight of the model must be in the files (weights
saved from another family would otherwise leave a random model, and a "0/8 rows" verdict on it).
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers

from pp_demo.core import FAMILIES, FIX, PAD, pipeline_logits
from pp_demo.errors import BadInput
from pp_demo.silent_imports import quiet
from pp_demo.verify.checker.inputs import load_model
from pp_demo.verify.compare import RowComparison, compare_rows, forward_logits
from pp_demo.verify.tolerances import tolerance

__all__ = ["REAL_SHAPES", "SMALL_SHAPES", "SIZES", "RealSizeRun", "left_padded_batch", "build_shaped", "run_real_size"]
__all__ += ["load_checkpoint", "choose_size", "format_run", "MAX_CPU_PARAMETERS"]

MAX_CPU_PARAMETERS = 100_000_000  # a checkpoint past this runs --size real on the CPU for minutes

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


def _model_type(path: Path, folder: str) -> str | None:
    """The ``model_type`` written in ``config.json``; None where the door should speak (no file,
    not JSON). A config without one is refused here: transformers would take the family from the
    folder's name (``attempt`` reads as MPT)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    family = config.get("model_type") if isinstance(config, dict) else None
    if not isinstance(family, str) or not family:
        raise BadInput(
            f"--checkpoint {folder}: its config.json names no model_type, so its family is unknown "
            "(save_pretrained writes one; the folder's name is not read as one)"
        )
    return family


def _weight_names(path: Path) -> set[str] | None:
    """The names of the weights in the checkpoint's files, read from their headers or index (no
    tensor loaded); None for a layout not read here."""
    for index in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        if (path / index).is_file():
            return set(json.loads((path / index).read_text(encoding="utf-8")).get("weight_map", {}))
    if (path / "model.safetensors").is_file():
        from safetensors import safe_open

        with safe_open(str(path / "model.safetensors"), "pt") as weights:
            return set(weights.keys())
    if (path / "pytorch_model.bin").is_file():
        return set(torch.load(path / "pytorch_model.bin", map_location="cpu", mmap=True, weights_only=True))
    return None


def _check_weights_loaded(path: Path, folder: str, family: str, model: Any) -> None:
    """Every weight of the model but the new score head is in the files, under the model's own
    name or without its base prefix (``model.layers.0...`` or ``layers.0...``)."""
    names = _weight_names(path)
    if names is None:
        return
    prefix = f"{model.base_model_prefix}."
    found = {name.removeprefix(prefix) for name in names}
    wanted = [name for name, _ in model.named_parameters() if not name.startswith("score.")]
    missing = [name for name in wanted if name.removeprefix(prefix) not in found]
    if missing:
        some = "none" if len(missing) == len(wanted) else f"{len(wanted) - len(missing)} of {len(wanted)}"
        raise BadInput(
            f"--checkpoint {folder}: {some} of its {family} model's weights are in its files (missing "
            f"{missing[0]}, ...): were they saved from another family than its config.json's model_type?"
        )


def load_checkpoint(folder: str, device: str, dtype: torch.dtype) -> tuple[str, Any]:
    """``(family, model)`` of a checkpoint in a local folder, through the checker's door (no hub):
    its ``*ForSequenceClassification`` with its own head, or a new one where it has none."""
    path = Path(folder)
    if not (path / "config.json").is_file():
        raise BadInput(f"--checkpoint {folder}: not a folder holding a config.json (a local checkpoint, no hub)")
    family = _model_type(path, folder)
    if family is not None and family not in REAL_SHAPES:
        raise BadInput(f"--checkpoint {folder}: a {family} model; the real-size run takes {', '.join(REAL_SHAPES)}")
    try:
        with quiet():  # a new score head's "newly initialized" warning: the head is random by design
            model = load_model(model_path=folder)
    except BadInput as error:
        raise BadInput(str(error).replace(f"--model-path {folder}", f"--checkpoint {folder}", 1)) from None
    family = str(model.config.model_type)
    _check_weights_loaded(path, folder, family, model)
    if model.config.pad_token_id is None:
        model.config.pad_token_id = PAD
    return family, model.to(device=device, dtype=dtype).eval()


def fit_sequence(model: Any, seq: int, folder: str) -> tuple[int, str | None]:
    """``seq`` shortened to the positions the model takes (OPT's learned positions end there);
    the line that says so, or None."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit >= seq:
        return seq, None
    if limit < 10:  # the batch's shortest row is a tenth of it
        raise BadInput(
            f"--checkpoint {folder}: its model takes at most {limit} positions (max_position_embeddings); the "
            "run's rows need 10 or more"
        )
    return limit, f"rows shortened to {limit} tokens: the checkpoint takes at most {limit} positions"


def choose_size(size: str | None, device: str, force: bool, checkpoint: bool = False) -> tuple[str, str | None]:
    """``(size, the line saying why it shrank or None)``: real on a GPU, small on a CPU unless forced.
    For a checkpoint the size is the batch's alone (its model is its own): ``run_real_size`` weighs
    the real batch on the CPU against the checkpoint's parameters."""
    on_cpu = torch.device(device).type == "cpu"
    if checkpoint:  # its progress line says the rows and tokens, once the checkpoint is loaded
        return size or ("small" if on_cpu else "real"), None
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
    allow_cpu: bool = False,
) -> list[RealSizeRun]:
    """Each family's run (or the checkpoint's), one model in memory at a time, a line before each."""
    rows, seq, shapes = SIZES[size]
    runs = []
    if checkpoint is not None:
        family, model = load_checkpoint(checkpoint, device, dtype)
        parameters = sum(p.numel() for p in model.parameters())
        if size == "real" and torch.device(device).type == "cpu" and not allow_cpu and parameters > MAX_CPU_PARAMETERS:
            raise BadInput(
                f"--size real on the CPU runs 8 x 1024 tokens through the checkpoint's {_billions(parameters)} "
                "parameters: minutes; use a GPU, --size small, or add --allow-cpu"
            )
        seq, shortened = fit_sequence(model, seq, checkpoint)
        if shortened:
            progress(shortened)
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
