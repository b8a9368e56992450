"""What a pipeline of p stages and m micro-batches could reach: the GPipe ideal, and this
machine's limit.

GPipe runs in m + p - 1 slots per phase (forwards, then backwards); in slot k, ``busy(k)``
stages work at once (1, 2, ... up to p, then down again). With p independent cores each slot
costs one stage's work, so p·m units of work take m + p - 1 slots: the ideal speedup is p·m / (m
+ p - 1).

The limit is the same schedule on this machine, which does not give n busy one-thread processes
n times one: two give c (measured, ``pp_demo.instruments.bench.one_process.capacity``), and on two cores n >
2 get no more than two. So a slot with one busy stage lasts one unit, a slot with n >= 2 busy
stages (n units of work) n / c units at best, and the limit speedup is p·m over the sum of
those: the ideal for p = 2 and c = 2. For p = 3 on two cores the slots with three busy stages
are oversubscribed, counted at the two-process rate c. The slot model makes every op one slot
long; a real backward costs about two forwards, so oversubscribed ranks can fill each other's
gaps and reach or beat it. The hard bound, for any p: two cores at capacity c run at most c
times one process, so no speedup exceeds c. 1F1B's slots have another shape and the same bubble;
the limit is GPipe's.
"""

from __future__ import annotations

__all__ = ["ideal_speedup", "limit_speedup", "busy_stages"]


def busy_stages(p: int, m: int) -> list[int]:
    """How many stages work in each of GPipe's m + p - 1 slots of one phase."""
    return [sum(1 for s in range(p) if 0 <= k - s < m) for k in range(m + p - 1)]


def ideal_speedup(p: int, m: int) -> float:
    """GPipe on p independent cores over one core: p·m / (m + p - 1)."""
    return p * m / (m + p - 1)


def limit_speedup(p: int, m: int, c: float) -> float:
    """GPipe's speedup on a machine where two busy processes give c times one (c <= 2)."""
    if not 0 < c <= 2:
        raise ValueError(f"the capacity of two processes is in (0, 2], got {c!r}")
    return p * m / sum(1 if n == 1 else n / c for n in busy_stages(p, m))
