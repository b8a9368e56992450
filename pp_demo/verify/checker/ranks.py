"""The checker under torchrun: the callable runs on every rank, one rank judges and prints.

``torchrun --nproc-per-node N -m pp_demo check MODULE:FUNC ...`` starts N checkers. Each joins
torchrun's process group (before the callable runs, so the callable can use it) and calls the
callable on the same batch. A pipeline's logits exist on its last stage only, so the callable
returns logits on the last rank and ``None`` on the others; the last rank compares. After every
batch the ranks tell each other, on a group of the checker's own (apart from the callable's
traffic), whether their call failed; after a failure the ranks' pipeline state is unknown (a
peer may still wait for a message), so the remaining batches are not run. At the end every rank
gets the last rank's report and returns its verdict and exit code; only the last prints.
"""

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from pp_demo.ranks.torchrun_env import check_torchrun_env, is_torchrun_rank

__all__ = ["Ranks", "join_ranks", "first_failure"]


@dataclass
class Ranks:
    rank: int
    world_size: int
    group: Any  # the checker's own gloo group

    @property
    def is_last(self) -> bool:
        return self.rank == self.world_size - 1

    def failures(self, mine: str | None) -> list[str | None]:
        """Every rank's failure line for this batch (``None``: it returned)."""
        everyone: list[str | None] = [None] * self.world_size
        dist.all_gather_object(everyone, mine, group=self.group)
        return everyone

    def from_last(self, value: Any) -> Any:
        """The last rank's ``value``, on every rank."""
        box = [value]
        dist.broadcast_object_list(box, src=self.world_size - 1, group=self.group)
        return box[0]


def join_ranks(device: str, timeout_s: float) -> Ranks | None:
    """Torchrun's process group, joined if the callable has not, and the checker's; ``None``
    outside torchrun."""
    if not is_torchrun_rank():
        return None
    check_torchrun_env()  # a rank outside the world would wait at the rendezvous
    if not dist.is_initialized():
        backend = "nccl" if torch.device(device).type == "cuda" else "gloo"
        dist.init_process_group(backend, timeout=timedelta(seconds=max(timeout_s, 60)))
    group = dist.new_group(backend="gloo", timeout=timedelta(seconds=max(timeout_s, 60) + 60))
    return Ranks(int(os.environ["RANK"]), dist.get_world_size(), group)


def first_failure(failures: list[str | None]) -> str | None:
    """The failure to report: a rank that raised explains a peer that only waited for it."""
    failed = [(rank, line) for rank, line in enumerate(failures) if line is not None]
    if not failed:
        return None
    rank, line = min(failed, key=lambda failure: failure[1].startswith("did not"))  # the first that raised
    return f"{line} on rank {rank} of {len(failures)}"
