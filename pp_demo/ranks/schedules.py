"""The schedules by name, which stages each rank holds, and the order GPipe and 1F1B run.

``SCHEDULES`` is the registry: a name the user gives (``Job(schedule=...)``) -> the engine's
class, by its name in ``torch.distributed.pipelining.schedules.get_schedule_class`` (as
torchtitan resolves its schedules), and how many stages each rank holds. A looped schedule
holds several: rank r of p holds stages r, r + p, r + 2p, ... (``stage_ids_of_rank``,
torchtitan's "loop" placement), so the first stage is on rank 0 and the last on rank p - 1,
as with one stage per rank. A new schedule of torch's is one more row.

What ``torch.distributed.pipelining``'s ``ScheduleGPipe`` and ``Schedule1F1B`` execute on
one rank during a training step (their ``_step_microbatches``), written out so notebooks and
figures can show it without starting ranks (the engine's own ``pipeline_order`` tables are
for its simulator, not this execution order). ``tests/ranks/test_engine_order.py``
records real ranks running both and compares.

* GPipe: every forward, then every backward; the bubble is the p - 1 slots at each end.
* 1F1B: stage s runs min(m, p - s) forwards, then alternates one backward and one forward,
  then the remaining backwards: at most p - s activations are kept alive (with m < p there
  is no steady state: ``pp_demo.ranks.jobs.Job`` says what runs then).
"""

from dataclasses import dataclass
from itertools import accumulate

from pp_demo.errors import BadInput

__all__ = [
    "ScheduleSpec",
    "SCHEDULES",
    "get_schedule",
    "stage_ids_of_rank",
    "schedule_order",
    "timeline",
    "peak_in_flight",
    "gpipe_slots",
]


@dataclass(frozen=True)
class ScheduleSpec:
    """One schedule: its name here, the engine's name for its class, stages per rank."""

    name: str
    torch_name: str
    stages_per_rank: int = 1


SCHEDULES = {
    spec.name: spec
    for spec in (
        ScheduleSpec("gpipe", "GPipe"),
        ScheduleSpec("1f1b", "1F1B"),
        ScheduleSpec("interleaved-1f1b", "Interleaved1F1B", stages_per_rank=2),
    )
}


def get_schedule(name: str) -> ScheduleSpec:
    if name not in SCHEDULES:
        known = ", ".join(repr(n) for n in SCHEDULES)
        raise BadInput(f"a schedule is one of {known}, got {name!r}")
    return SCHEDULES[name]


def stage_ids_of_rank(rank: int, n_ranks: int, stages_per_rank: int) -> tuple[int, ...]:
    """The stages rank ``rank`` of ``n_ranks`` holds, in pipeline order ("loop" placement):
    with 2 ranks and 2 stages each, rank 0 holds stages 0 and 2, rank 1 stages 1 and 3."""
    return tuple(rank + k * n_ranks for k in range(stages_per_rank))


def schedule_order(kind: str, n_stages: int, n_micro: int) -> list[list[str]]:
    """Per stage, its operations in order: ``"F3"`` the forward of micro-batch 3, ``"B3"`` its backward."""
    if kind not in ("gpipe", "1f1b"):
        unwritten = f"the order of {kind!r} is not written out here, only that of 'gpipe' and '1f1b'"
        raise BadInput(unwritten if kind in SCHEDULES else f"a schedule is 'gpipe' or '1f1b', got {kind!r}")
    if n_stages < 2 or n_micro < 1:
        raise BadInput(f"a pipeline needs at least 2 stages and 1 micro-batch, got {n_stages} and {n_micro}")
    if kind == "gpipe":
        return [[f"F{i}" for i in range(n_micro)] + [f"B{i}" for i in range(n_micro)] for _ in range(n_stages)]
    if n_micro < n_stages:
        raise BadInput(
            f"1F1B needs at least one micro-batch per stage ({n_stages}), got {n_micro}: "
            "with fewer the runner uses GPipe"
        )
    order = []
    for stage in range(n_stages):
        warmup = min(n_micro, n_stages - stage)
        ops = [f"F{i}" for i in range(warmup)]
        for backward in range(n_micro):
            ops.append(f"B{backward}")
            if warmup + backward < n_micro:
                ops.append(f"F{warmup + backward}")
        order.append(ops)
    return order


def timeline(kind: str, n_stages: int, n_micro: int) -> list[tuple[int, int, str]]:
    """``schedule_order`` placed in time: ``(stage, slot, op)`` for every op, each taking one
    slot (an idealisation: a real backward costs about twice a forward). An op starts once
    its stage is free and its input exists: a forward needs the previous stage's forward of
    that micro-batch, a backward the next stage's backward of it. Empty slots are the bubble."""
    order = schedule_order(kind, n_stages, n_micro)
    done: dict[tuple[int, str], int] = {}  # (stage, op) -> the slot after it finishes
    placed: list[tuple[int, int, str]]
    free, nxt, placed = [0] * n_stages, [0] * n_stages, []
    while len(placed) < n_stages * 2 * n_micro:
        for stage, ops in enumerate(order):
            while nxt[stage] < len(ops):
                op = ops[nxt[stage]]
                source = stage - 1 if op[0] == "F" else stage + 1
                if 0 <= source < n_stages and (source, op) not in done:
                    break  # its input has not arrived yet: another stage goes first
                start = max(free[stage], done.get((source, op), 0))
                placed.append((stage, start, op))
                done[stage, op] = free[stage] = start + 1
                nxt[stage] += 1
    return sorted(placed, key=lambda t: (t[0], t[1]))


def peak_in_flight(ops: list[str]) -> int:
    """The most micro-batches whose activations one stage holds at once (a forward's,
    until its backward)."""
    return max(accumulate((1 if op[0] == "F" else -1 for op in ops), initial=0))  # held after each op, from none


def gpipe_slots(n_micro: int, n_stages: int = 2, backward: bool = False) -> list[tuple[int, int, str, int]]:
    """Time slots of an idealised GPipe step, ``(stage, slot, "F" or "B", micro_batch)``, as
    ``timeline`` places the engine's order (notebook 10's exercises read them)."""
    return [
        (stage, slot, op[0], int(op[1:]))
        for stage, slot, op in timeline("gpipe", n_stages, n_micro)
        if backward or op[0] == "F"
    ]
