"""The order in which each rank runs its micro-batches, for GPipe and 1F1B on p stages.

What ``torch.distributed.pipelining``'s ``ScheduleGPipe`` and ``Schedule1F1B`` execute on
one rank during a training step (their ``_step_microbatches``), written out so notebooks
and figures can show it without starting ranks. (The engine's own ``pipeline_order``
tables are meant for its simulator and are not this execution order.)

* GPipe: every forward, then every backward; the bubble is the p - 1 slots at each end.
* 1F1B: stage s runs min(m, p - s) forwards, then alternates one backward and one
  forward, then the remaining backwards: at most p - s activations are kept alive.
  With m < p stage 0's warm-up would already be every forward, so 1F1B has no steady
  state; the engine refuses it, and the runner runs GPipe instead (same gradients).
"""

__all__ = ["schedule_order", "gpipe_slots"]

Slot = tuple[int, int, str, int]
"""``(stage, time slot, "F" or "B", micro-batch)``."""


def schedule_order(kind: str, n_stages: int, n_micro: int) -> list[list[str]]:
    """Per stage, its operations in order: ``"F3"`` the forward of micro-batch 3, ``"B3"`` its backward."""
    if kind not in ("gpipe", "1f1b"):
        raise ValueError(f"a schedule is 'gpipe' or '1f1b', got {kind!r}")
    if n_stages < 2 or n_micro < 1:
        raise ValueError(f"a pipeline needs at least 2 stages and 1 micro-batch, got {n_stages} and {n_micro}")
    if kind == "gpipe":
        return [[f"F{i}" for i in range(n_micro)] + [f"B{i}" for i in range(n_micro)] for _ in range(n_stages)]
    if n_micro < n_stages:
        raise ValueError(f"1F1B needs at least one micro-batch per stage ({n_stages}), got {n_micro}: "
                         "with fewer the runner uses GPipe")
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



def gpipe_slots(n_micro: int, n_stages: int = 2, backward: bool = False) -> list[Slot]:
    """Time slots of an idealised GPipe step, every forward or backward taking one slot:
    stage s runs the forward of micro-batch i at slot s + i (it waits for stage s - 1),
    and, with ``backward``, the backwards drain the pipe in reverse once the last forward
    has left the last stage, last micro-batch first (an idealised drain; ``schedule_order``
    gives the engine's order, first to last, which takes as many slots)."""
    slots = [(s, s + i, "F", i) for s in range(n_stages) for i in range(n_micro)]
    if backward:
        start = n_micro + n_stages - 1          # the last forward has left the last stage
        for s in range(n_stages):
            for k, i in enumerate(reversed(range(n_micro))):
                slots.append((s, start + (n_stages - 1 - s) + k, "B", i))
    return slots
