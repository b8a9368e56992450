"""Check any framework's pooled forward against ``model.forward`` on the padding battery.

Give a ``*ForSequenceClassification`` model and a callable
``forward(model, input_ids, attention_mask) -> logits`` that computes the same logits
another way (your pipeline's last stage, a reward head, a serving path). For every
batch of the battery the report says which rows match ``model.forward``, by how much
they differ, and at which position each row was pooled: found by matching the
callable's logits against the model's logits at *every* position (the score head over
all hidden states). From those positions it names the pooling rules the callable is
consistent with. Two stages are enough to find pooling bugs: pooling happens on the
last stage only, so more stages change nothing there.
"""

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pp_demo.pipeline.jobs import Batch
from pp_demo.pooling.rules import FIX, pooled_positions
from pp_demo.pooling.rules import PADDED_RULES as _PADDED_RULES  # the rules a callable is tested against
from pp_demo.verify.checker_batches import battery
from pp_demo.verify.tolerances import tolerance

__all__ = ["RowCheck", "CaseCheck", "Report", "check_forward", "assert_matches_forward", "load_callable", "load_model"]


@dataclass(frozen=True)
class RowCheck:
    matches: bool
    max_abs_diff: float
    pooled_at: tuple[int, ...]  # positions whose logits equal the callable's (empty: none)
    forward_pools: int  # what model.forward pools
    true_last: int | None  # last real token by the mask (None: no real token)
    rounded_to: str | None = None  # the callable's coarser dtype, when only its rounding hides pooled_at


@dataclass
class CaseCheck:
    name: str
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    rows: list[RowCheck]

    @property
    def passed(self) -> bool:
        return all(r.matches for r in self.rows)


@dataclass
class Report:
    cases: list[CaseCheck]
    atol: float
    consistent_rules: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    def summary(self) -> str:
        """A few lines a maintainer can read: verdict, failing cases, what the rule looks like."""
        failing = [c for c in self.cases if not c.passed]
        lines = [
            f"{'PASS' if self.passed else 'FAIL'}: {sum(c.passed for c in self.cases)}/{len(self.cases)} "
            f"batches match model.forward (|diff| <= {self.atol:g})"
        ]
        for case in failing:
            bad = [i for i, r in enumerate(case.rows) if not r.matches]
            row = case.rows[bad[0]]
            lines.append(
                f"  {case.name}: rows {bad} differ; row {bad[0]} "
                f"{case.input_ids[bad[0]].tolist()} pooled at {_where(row)}, model.forward pools "
                f"{row.forward_pools}, max |diff| {row.max_abs_diff:.3g}"
            )
        rules = ", ".join(self.consistent_rules) or "none of the known rules"
        lines.append(f"consistent with: {rules}")
        return "\n".join(lines)


def _with_attention(model: Any, attn_implementation: str) -> Any:
    """A twin of ``model`` (same weights) built with another attention implementation:
    some families pick their attention class when built, so setting it later is not enough."""
    config = copy.deepcopy(model.config)
    config._attn_implementation = attn_implementation
    twin = type(model)(config)
    twin.load_state_dict(model.state_dict())
    return twin


def _where(row: RowCheck) -> str:
    positions = row.pooled_at
    if not positions:
        return "no position (the hidden states differ, not just the pooling)"
    if len(positions) > 3:  # e.g. padding positions that all see the same uniform attention
        where = f"any of {len(positions)} positions ({positions[0]}..{positions[-1]}), whose logits coincide"
    else:
        where = f"position {', '.join(map(str, positions))}"
    if row.rounded_to is None:
        return where
    if row.forward_pools in positions:
        return f"{where} (the position model.forward pools), only rounded to {row.rounded_to}"
    return f"{where}, not the position model.forward pools (the logits are also rounded to {row.rounded_to})"


def _positions_logits(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The model's score head over every position: ``(B, L, num_labels)``."""
    out = model.base_model(input_ids=ids, attention_mask=mask, use_cache=False)
    hidden = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
    logits: torch.Tensor = model.score(hidden)
    return logits


def _pooled_at(per_position: torch.Tensor, got: torch.Tensor, atol: float) -> torch.Tensor:
    """``(B, L)``: which positions' logits the callable's logits equal within ``atol``."""
    return (per_position - got[:, None, :]).abs().amax(-1) <= atol


def _pooled_at_rounded(per_position: torch.Tensor, got: torch.Tensor, dtype: torch.dtype, atol: float) -> torch.Tensor:
    """As ``_pooled_at``, allowing each logit one rounding step of ``dtype`` (its relative
    eps): where a callable pooled when it returns, say, bf16 logits of an fp32 model."""
    step = torch.finfo(dtype).eps * per_position.abs() + atol
    return ((per_position - got[:, None, :]).abs() <= step).all(-1)


@torch.no_grad()
def _check_forward_on_batch(
    model: Any, forward: Callable[..., torch.Tensor], batch: Batch, atol: float, device: str
) -> CaseCheck:
    """One battery batch: the callable's rows against ``model.forward``, and where each pooled."""
    ids, mask = batch.input_ids.to(device), batch.attention_mask.to(device)
    logits = model(input_ids=ids, attention_mask=mask).logits
    reference = logits.float()
    got = forward(model, ids, mask)
    if got.shape != reference.shape:
        raise ValueError(
            f"the callable returned logits of shape {tuple(got.shape)} on batch "
            f"{batch.name!r}; model.forward returns {tuple(reference.shape)}"
        )
    got_dtype = got.dtype
    coarser = got_dtype.is_floating_point and torch.finfo(got_dtype).eps > torch.finfo(logits.dtype).eps
    got = got.float()
    per_position = _positions_logits(model, ids, mask).float()
    near = _pooled_at(per_position, got, atol)  # (B, L)
    diff = (got - reference).abs().amax(-1)
    fix = pooled_positions(FIX, input_ids=ids, pad_token_id=model.config.pad_token_id)
    true_last = pooled_positions("rightmost_attended", attention_mask=mask)
    rows = []
    for b in range(ids.shape[0]):
        real = bool(mask[b].any())
        pooled_at, rounded_to = tuple(near[b].nonzero().flatten().tolist()), None
        if not pooled_at and coarser:  # maybe pooled right and only rounded: say which
            rounded = _pooled_at_rounded(per_position[b : b + 1], got[b : b + 1], got_dtype, atol)[0]
            if rounded.any():
                pooled_at = tuple(rounded.nonzero().flatten().tolist())
                rounded_to = str(got_dtype).removeprefix("torch.")
        rows.append(
            RowCheck(
                bool(diff[b] <= atol),
                float(diff[b]),
                pooled_at,
                int(fix[b]),
                int(true_last[b]) if real else None,
                rounded_to,
            )
        )
    return CaseCheck(batch.name, batch.input_ids, batch.attention_mask, rows)


def _consistent_rules(cases: list["CaseCheck"], pad_token_id: int) -> list[str]:
    consistent = []
    for name in _PADDED_RULES:
        ok = True
        for case in cases:
            positions = (
                pooled_positions(
                    name, input_ids=case.input_ids, pad_token_id=pad_token_id, attention_mask=case.attention_mask
                )
                % case.input_ids.shape[1]
            )
            ok &= all(int(p) in row.pooled_at for p, row in zip(positions, case.rows, strict=True))
        if ok:
            consistent.append(name)
    return consistent


def check_forward(
    model: Any,
    forward: Callable[..., torch.Tensor],
    *,
    dtype: torch.dtype = torch.float32,
    attn_implementation: str | None = None,
    device: str = "cpu",
    atol: float | None = None,
    seed: int = 0,
    lengths: Sequence[int] = (5, 9, 16),
    batch_sizes: Sequence[int] = (2, 4, 7),
) -> "Report":
    """Run the battery; returns a ``Report``. The model is moved to ``device`` and ``dtype``
    and put in eval mode; ``attn_implementation`` (``"eager"``, ``"sdpa"``) is set on it
    for the check when given."""
    if attn_implementation is not None:
        model = _with_attention(model, attn_implementation)
    model = model.to(device=device, dtype=dtype).eval()
    atol = tolerance(device, dtype) if atol is None else atol
    pad, vocab = model.config.pad_token_id, model.config.vocab_size
    cases = [
        _check_forward_on_batch(model, forward, batch, atol, device)
        for batch in battery(pad, vocab, seed, lengths, batch_sizes)
    ]
    return Report(cases, atol, _consistent_rules(cases, pad))


def assert_matches_forward(model: Any, forward: Callable[..., torch.Tensor], **options: Any) -> "Report":
    """For pytest: ``assert_matches_forward(model, my_forward)`` fails with the summary."""
    report = check_forward(model, forward, **options)
    if not report.passed:
        raise AssertionError(report.summary())
    return report


def load_callable(path: str) -> Callable[..., Any]:
    """``"package.module:function"`` (or ``package.module.function``) to the function."""
    import importlib

    module_name, _, attribute = path.partition(":") if ":" in path else path.rpartition(".")
    if not module_name or not attribute:
        raise ValueError(f"give the callable as package.module:function, got {path!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:  # one line, not the import machinery's traceback
        raise ValueError(
            f"cannot import {module_name} ({error}); it must be importable from here: "
            f"run from its project folder or add that folder to PYTHONPATH"
        ) from error
    function: Callable[..., Any] | None = getattr(module, attribute, None)
    if not callable(function):
        raise ValueError(f"{attribute!r} in {module_name} is not a callable")
    return function


def load_model(family: str | None = None, model_path: str | None = None, attn_implementation: str | None = None) -> Any:
    """A tiny pp_demo model by family, or a local checkpoint directory (never downloaded)."""
    if (family is None) == (model_path is None):
        raise ValueError("give exactly one of a family or a local model path")
    if family is not None:
        from pp_demo.pipeline.families import build_model

        return build_model(family, attn_implementation=attn_implementation)
    from transformers import AutoModelForSequenceClassification

    path = Path(str(model_path))
    if not path.is_dir():  # transformers would read it as a Hub repo id and say so
        raise ValueError(f"--model-path {model_path}: no such folder (a local checkpoint folder is expected)")
    if not (path / "config.json").is_file():
        raise ValueError(
            f"--model-path {model_path}: no config.json there, so not a saved checkpoint "
            f"(model.save_pretrained(folder) writes one)"
        )
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    try:
        return AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True, **kwargs)
    except (OSError, ValueError, KeyError) as error:  # no weights, an unknown model type, ...
        raise ValueError(f"--model-path {model_path}: cannot load it ({str(error).splitlines()[0]})") from error
