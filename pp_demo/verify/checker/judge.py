"""Check any framework's pooled forward against ``model.forward`` on the padding battery.

Give a ``*ForSequenceClassification`` model and a callable
``forward(model, input_ids, attention_mask) -> logits`` computing the same logits another way
(your pipeline's last stage, a reward head, a serving path). Per batch the report says which
rows match the reference, by how much they differ, and where each row was pooled, read back from
the logits (``pp_demo.verify.where_pooled``), and so which pooling rules the callable is
consistent with. Two stages are enough to find pooling bugs: pooling happens on the last stage
only.

The reference is the checker's own, computed for every batch before the callable first runs, on
a copy of the model the callable never sees. The callable gets a fresh deep copy of the model
per batch (trace it, wrap it, change it in place) and clones of the ids and mask; the caller's
model is never changed, not even its dtype. A keyword ``model_path`` or ``micro_batches`` in its
signature receives the checkpoint folder (so each rank can load its own weights) or the
micro-batch count. Under torchrun see ``pp_demo.verify.checker.ranks``.
"""

import contextlib
import copy
import dataclasses
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from pp_demo.bounds import seconds, seed_value, strings, tolerance_value
from pp_demo.core import FIX, RULES
from pp_demo.errors import BadInput
from pp_demo.pooling.positions import PADDED_RULES, pooled_positions
from pp_demo.ranks.jobs import Batch
from pp_demo.verify.checker import inputs
from pp_demo.verify.checker.batches import battery, default_batch_sizes
from pp_demo.verify.checker.inputs import load_callable, load_model
from pp_demo.verify.checker.integrity import Snapshot
from pp_demo.verify.checker.ranks import Ranks, first_failure, join_ranks
from pp_demo.verify.checker.report import FORWARD, TRUE_LAST, CaseCheck, Report, RowCheck
from pp_demo.verify.checker.worker import as_logits, call_in_worker
from pp_demo.verify.tolerances import check_separates, dtype_named, tolerance
from pp_demo.verify.where_pooled import per_position_logits, pooled_mask, pooled_mask_rounded

__all__ = ["check_forward", "assert_matches_forward", "load_callable", "load_model"]  # the report: checker.report

# A callable that ends its process gets no verdict from inside it (check_forward's docstring), so
# ``python -m pp_demo check`` runs this in a child it watches (pp_demo.verify.checker.guard);
# ``watching_batches`` tells that child's journal each batch.
_batch_watchers: list[Callable[..., None]] = []


@contextlib.contextmanager
def watching_batches(write: Callable[..., None]) -> Iterator[None]:
    """Within the block, ``write("start", i, n, name, shape)`` before the callable runs on a
    batch and ``write("done", i, verdict)`` after (``verdict``: ``ok`` or what went wrong)."""
    _batch_watchers.append(write)
    try:
        yield
    finally:
        _batch_watchers.remove(write)


def _tell(*fields: object) -> None:
    for write in _batch_watchers:
        write(*fields)


# A callable is tested against every rule that pools padded rows (PADDED_RULES); without a pad id
# only those that read the mask alone can say where they pool
_MASK_RULES = [name for name, rule in RULES.items() if rule.needs == ("attention_mask",)]


@dataclasses.dataclass(frozen=True)
class _Reference:
    logits: torch.Tensor  # (B, num_labels), float
    per_position: torch.Tensor  # (B, L, num_labels), float
    positions: list[int]  # the reference position per row
    true_last: list[int | None]
    dtype: torch.dtype  # the reference's logits dtype
    seconds: float = 0.0  # model.forward's own time on the batch: a timeout below it cannot be met


def _prepared(model: Any, dtype: torch.dtype, device: str, attn_implementation: str | None) -> Any:
    """A copy of ``model`` on ``device`` and ``dtype``, in eval mode: the caller's stays as it is.
    Another attention implementation means a twin built from the same weights: some families
    pick their attention class when built, so setting it later is not enough."""
    if attn_implementation is None:
        twin = copy.deepcopy(model)
    else:
        config = copy.deepcopy(model.config)
        config._attn_implementation = attn_implementation
        twin = type(model)(config)
        twin.load_state_dict(model.state_dict())
    return twin.to(device=device, dtype=dtype).eval()


@torch.no_grad()
def _reference(model: Any, batch: Batch, device: str) -> _Reference:
    ids, mask = batch.input_ids.to(device), batch.attention_mask.to(device)
    true_last = [
        int(p) if mask[b].any() else None
        for b, p in enumerate(pooled_positions("rightmost_attended", attention_mask=mask))
    ]
    pad = model.config.pad_token_id
    started = time.perf_counter()
    if pad is not None:
        logits = model(input_ids=ids, attention_mask=mask).logits
        took = time.perf_counter() - started
        every = per_position_logits(model, ids, mask)
        positions = pooled_positions(FIX, input_ids=ids, pad_token_id=pad).tolist()
        return _finite(_Reference(logits.float(), every.float(), positions, true_last, logits.dtype, took), batch)
    # no pad id: model.forward refuses batches of more rows than one, and pools the last
    # position of a single row; the reference is the true last real token, row by row
    every = torch.cat([per_position_logits(model, ids[b : b + 1], mask[b : b + 1]) for b in range(len(ids))])
    took = time.perf_counter() - started
    positions = [int(p) for p in true_last if p is not None]
    logits = every[torch.arange(len(ids)), torch.tensor(positions)]
    return _finite(_Reference(logits.float(), every.float(), positions, true_last, every.dtype, took), batch)


def _finite(ref: _Reference, batch: Batch) -> _Reference:
    """The reference, refused when not finite: a NaN there is the model's own (its weights, or a
    dtype too narrow for its logits), and any callable would be judged against nothing."""
    bad = (~torch.isfinite(ref.logits).all(-1)).nonzero().flatten().tolist()
    if bad:
        raise BadInput(
            f"model.forward's own logits are not finite (NaN or inf) on batch {batch.name}, rows {bad}: "
            "the model gives no reference to judge against (check its weights, or use --dtype fp32)"
        )
    return ref


def _judge(batch: Batch, ref: _Reference, got: torch.Tensor, atol: float) -> CaseCheck:
    coarser = torch.finfo(got.dtype).eps > torch.finfo(ref.dtype).eps
    finite, infinite = torch.isfinite(got).all(-1), torch.isinf(got).any(-1)
    near = pooled_mask(ref.per_position, got, atol)
    diff = (got.float() - ref.logits).abs().amax(-1)
    rows = []
    for b in range(len(got)):
        pooled_at, rounded_to = near[b].nonzero().flatten().tolist(), None
        if not pooled_at and coarser:  # maybe pooled right and only rounded: say which
            rounded = pooled_mask_rounded(ref.per_position[b : b + 1], got[b : b + 1], got.dtype, atol)[0]
            pooled_at = rounded.nonzero().flatten().tolist()
            rounded_to = str(got.dtype).removeprefix("torch.") if pooled_at else None
        matches = bool(finite[b]) and bool(diff[b] <= atol)
        row = RowCheck(matches, float(diff[b]), tuple(pooled_at), ref.positions[b], ref.true_last[b], rounded_to)
        rows.append(dataclasses.replace(row, nan=not bool(finite[b]), inf=bool(infinite[b])))
    return CaseCheck(batch.name, batch.input_ids, batch.attention_mask, rows)


def _pooled_as(rule: str, case: CaseCheck, pad_token_id: int | None) -> bool:
    """Every row of ``case`` was pooled (maybe among tied positions) where ``rule`` pools it."""
    ids, mask = case.input_ids, case.attention_mask
    positions = pooled_positions(rule, input_ids=ids, pad_token_id=pad_token_id, attention_mask=mask) % ids.shape[1]
    return all(int(p) in row.pooled_at for p, row in zip(positions, case.rows, strict=True))


def _extras(forward: Callable[..., Any], model_path: str | None, micro_batches: int) -> dict[str, Any]:
    """The keywords the callable's signature asks for (``model_path``, ``micro_batches``)."""
    try:
        parameters = inspect.signature(forward).parameters
    except (TypeError, ValueError):  # a builtin or C callable: positional arguments only
        return {}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    offered = {"model_path": model_path, "micro_batches": micro_batches}
    return {key: value for key, value in offered.items() if value is not None and (takes_any or key in parameters)}


def _battery(
    model: Any, seed: int, lengths: Sequence[int], sizes: Sequence[int], cases: Sequence[str] | None, micro_batches: int
) -> tuple[list[Batch], list[str]]:
    fitted, note = inputs.fit_lengths(model, lengths)
    notes = [note] if note else []
    pad, vocab, eos = model.config.pad_token_id, model.config.vocab_size, model.config.eos_token_id
    filler = eos if isinstance(eos, int) and 0 <= eos < vocab else 0
    batches = battery(pad, vocab, seed, fitted, sizes, cases=cases, micro_batches=micro_batches, filler=filler)
    if pad is None:
        notes.append(f"no pad id: masked positions hold id {filler}; the all_pad case (no real token) is left out")
        batches = [b for b in batches if b.attention_mask.any(-1).all()]
    return batches, notes


def check_forward(
    model: Any,
    forward: "Callable[..., Any] | str",
    *,
    dtype: "torch.dtype | str" = torch.float32,
    attn_implementation: str | None = None,
    device: str = "cpu",
    atol: float | None = None,
    seed: int = 0,
    lengths: Sequence[int] = (5, 9, 16),
    batch_sizes: Sequence[int] | None = None,
    cases: Sequence[str] | None = None,
    micro_batches: int = 1,
    timeout_s: float | None = 120.0,
    model_path: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run the battery through ``forward`` and judge every batch; returns a ``Report``.

    Raises ``pp_demo.errors.BadInput`` (one line) for an input the checker cannot work with; whatever the
    callable does (raise, ``sys.exit``, hang past ``timeout_s``, return something else) is a verdict in the
    report instead. A callable that ends the process itself (``os._exit``, a crash, a signal) ends the caller
    with it: the command line's ``check`` runs this in a child process to judge even that. ``timeout_s``:
    seconds per batch, more than 0 and at most a day (``None``: wait as long as it takes); the first batch
    that runs past it ends the run, the rest reported not run. ``atol`` given by
    hand must stay below the difference between the reference and any other position on the battery (refused
    otherwise, with the tolerances that fit the logits). ``progress`` receives one line per batch."""
    dtype, device = dtype_named(dtype), inputs.checker_device(device)
    if atol is not None:
        tolerance_value(atol, "atol")
    seed_value(seed, "seed")
    if cases is not None:
        cases = strings(cases, "cases", '["left", "right"] (a list, even of one case)')
    timeout_s = None if timeout_s is None else seconds(timeout_s, "timeout_s")
    inputs.check_sizes(lengths, (1,) if batch_sizes is None else batch_sizes, micro_batches)
    sizes = default_batch_sizes(micro_batches) if batch_sizes is None else batch_sizes
    inputs.check_attention(attn_implementation)
    forward = inputs.as_callable(forward)
    inputs.check_model(model)
    reference_model = _prepared(model, dtype, device, attn_implementation)
    batches, notes = _battery(reference_model, seed, lengths, sizes, cases, micro_batches)
    ranks = join_ranks(device, timeout_s or 600.0)
    judging = ranks is None or ranks.is_last
    # every rank computes the references: a refusal (a tolerance given by hand, a reference that
    # is not finite) on the last rank alone would strand the others
    references = [_reference(reference_model, b, device) for b in batches]
    if atol is not None:
        check_separates(float(atol), *_separation(references, tolerance(device, dtype)), dtype)
    atol = tolerance(device, dtype) if atol is None else float(atol)
    extras = _extras(forward, model_path, micro_batches)
    checking = _Checking(forward, reference_model, extras, atol, timeout_s, torch.device(device), ranks)
    checked = checking.run(batches, references if judging else [None] * len(batches), progress if judging else None)
    report = _report(checked, batches, atol, reference_model, notes) if judging else None
    if ranks is not None:  # every rank returns the last rank's report
        return ranks.from_last(report)  # type: ignore[no-any-return]
    assert report is not None  # one process judges
    return report


def _report(checked: list[Any], batches: list[Any], atol: float, model: Any, notes: list[str]) -> Report:
    """The verdicts by the model's reference (``FORWARD``, or ``TRUE_LAST`` without a pad id)."""
    pad = model.config.pad_token_id
    judged = [case for case in checked if case.failure is None]
    rules = PADDED_RULES if pad is not None else _MASK_RULES
    consistent = [name for name in rules if all(_pooled_as(name, case, pad) for case in judged)]
    not_run = [b.name for b in batches[len(checked) :]]
    reference = FORWARD if pad is not None else TRUE_LAST
    report = Report(checked, atol, consistent, reference, notes, not_run, tells_apart=_tells_apart(batches, rules, pad))
    if not_run and checked[-1].timed_out:
        report.not_run_why = "it ran past the timeout: a forward that hangs once would cost a timeout per batch"
    return report


def _at(rule: str, ids: torch.Tensor, mask: torch.Tensor, pad_token_id: int | None, length: int) -> list[int]:
    """Where ``rule`` pools each row, within the row (a raw -1 reads the last position)."""
    positions = pooled_positions(rule, input_ids=ids, pad_token_id=pad_token_id, attention_mask=mask) % length
    return positions.tolist()


def _tells_apart(batches: list[Batch], rules: Sequence[str], pad_token_id: int | None) -> bool:
    """Some row of the battery is pooled at different positions by two of ``rules`` (without a pad
    id, or by the last position, where transformers pools a row then): else (right padding alone,
    say) every rule, the bug's included, reads the same token, and a match says nothing of the
    pooling."""
    for batch in batches:
        ids, mask = batch.input_ids, batch.attention_mask
        length = ids.shape[1]
        found = {tuple(_at(rule, ids, mask, pad_token_id, length)) for rule in rules}
        if pad_token_id is None:
            found.add((length - 1,) * len(ids))
        if len(found) > 1:
            return True
    return False


def _separation(references: list[_Reference], default_atol: float) -> tuple[float, float]:
    """The smallest max |logit difference| between a row's reference and any other position's
    logits (positions within the default tolerance of the reference coincide with it and are
    left out), and the largest |logit| of the references."""
    nearest, size = float("inf"), 0.0
    for ref in references:
        apart = (ref.per_position - ref.logits[:, None, :]).abs().amax(-1)
        distinct = apart[apart > default_atol]
        if distinct.numel():
            nearest = min(nearest, float(distinct.min()))
        size = max(size, float(ref.logits.abs().max()))
    return nearest, size


@dataclasses.dataclass(frozen=True)
class _Checking:
    """What every batch's call needs (``ranks``: ``None`` outside torchrun)."""

    forward: Callable[..., Any]
    reference_model: Any
    extras: dict[str, Any]
    atol: float
    timeout_s: float | None
    device: torch.device
    ranks: Ranks | None

    def run(
        self, batches: list[Batch], references: Sequence[_Reference | None], say: Callable[[str], None] | None
    ) -> list[CaseCheck]:
        """Each batch, telling the watchers and ``say``; under torchrun none after a failure."""
        if say is not None:
            has_pad = self.reference_model.config.pad_token_id is not None
            against = "model.forward" if has_pad else "the true last real token (no pad id)"
            say(f"checking {len(batches)} batch{'es' if len(batches) != 1 else ''} against {against}")
        checked: list[CaseCheck] = []
        code = Snapshot()  # the checker's own code, compared after each call (checker.integrity)
        for i, (batch, ref) in enumerate(zip(batches, references, strict=True)):
            _tell("start", i + 1, len(batches), batch.name, "x".join(map(str, batch.input_ids.shape)))
            checked.append(self.one_batch(batch, ref, code))
            _tell("done", i + 1, "ok" if checked[-1].passed else checked[-1].status())
            if say is not None:
                say(f"batch {i + 1}/{len(batches)} {batch.name} ({checked[-1].shape}): {checked[-1].status()}")
            if checked[-1].timed_out or (self.ranks is not None and checked[-1].failure is not None):
                break  # a hung forward would take a timeout per batch; on ranks, a peer may still wait
        return checked

    def one_batch(self, batch: Batch, ref: _Reference | None, code: Snapshot) -> CaseCheck:
        """The callable on its own copies, its output checked, then judged (on the judging rank)
        unless it changed the checker's code."""
        ids, mask = batch.input_ids.to(self.device).clone(), batch.attention_mask.to(self.device).clone()
        model = copy.deepcopy(self.reference_model)
        outcome = call_in_worker(self.forward, (model, ids, mask), self.extras, self.timeout_s)
        got, failure = None, outcome.failure
        if outcome.timed_out and ref is not None and self.timeout_s is not None and self.timeout_s < ref.seconds:
            failure = f"{failure}: the timeout is too short, model.forward itself takes longer on this batch"
        changed = code.changed()
        if changed is not None:  # judged by code the callable replaced: no verdict can come from it
            failure = f"replaced the checker's own {changed}: no verdict from a process whose checker was changed"
        if failure is None and ref is not None:
            got, failure = as_logits(outcome.value, tuple(ref.logits.shape), self.device)
        if self.ranks is not None:
            failure = first_failure(self.ranks.failures(failure))
        if failure is not None or got is None or ref is None:  # or a rank that does not judge: its report comes later
            return CaseCheck(batch.name, batch.input_ids, batch.attention_mask, [], failure, outcome.timed_out)
        return _judge(batch, ref, got, self.atol)


def assert_matches_forward(model: Any, forward: Callable[..., Any], **options: Any) -> Report:
    """For pytest: ``assert_matches_forward(model, my_forward)`` fails with the summary."""
    report = check_forward(model, forward, **options)
    if not report.passed:
        raise AssertionError(report.summary())
    return report
