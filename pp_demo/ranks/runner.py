"""``run(jobs, on=...)``: the one way to run a pipeline, in this process or as ranks.

* ``on="process"``: every stage in this process, micro-batch by micro-batch (``pp_demo.ranks.in_process``);
* ``on="ranks"``: one rank per stage on ``torch.distributed.pipelining`` (two stages per
  rank under a looped schedule). Spawned here (from Python or a notebook; the ranks start
  once per rank count for all the jobs), or, when this process is one of torchrun's ranks,
  those ranks: then ``--nproc-per-node`` must be the number of ranks the stages need, and
  jobs without split points are cut into as many stages as those ranks hold.

Every job is checked before anything starts, so bad input is a one-line ``BadInput``;
a rank that fails, dies or hangs is a ``pp_demo.ranks.launch.PipelineError`` within ``timeout_s``.
"""

from collections.abc import Iterable
from typing import Literal, cast

from pp_demo.errors import BadInput
from pp_demo.ranks.in_process import run_in_process
from pp_demo.ranks.jobs import Job, Result, prepare
from pp_demo.ranks.launch import join_torchrun, ranks_placement, spawn_ranks
from pp_demo.ranks.on_rank import RankJob, merge
from pp_demo.ranks.torchrun_env import check_torchrun_env, is_torchrun_rank, torchrun_world_size
from pp_demo.ranks.validate import check_main_guard, check_run_arguments

__all__ = ["run"]


def run(
    jobs: Iterable[Job | RankJob], on: Literal["process", "ranks"] = "process", timeout_s: float = 120
) -> list[Result] | None:
    """One result per job, in order: ``Inference``, ``Step`` or ``Training`` by the job's
    mode, or a ``RankJob``'s own answer (``on="ranks"`` only). Under torchrun, ``None`` on
    every rank but the last, which gathers them."""
    jobs = check_run_arguments(jobs, on, timeout_s, kinds=(Job, RankJob))
    if on == "process":
        rank_job = next((job for job in jobs if isinstance(job, RankJob)), None)
        if rank_job is not None:  # it needs a rank's process group and StageCache
            raise BadInput(f"{type(rank_job).__name__} drives the ranks itself: run it with on='ranks'")
        return [run_in_process(prepare(job)) for job in jobs]
    check_torchrun_env()
    torchrun_ranks = torchrun_world_size() if is_torchrun_rank() else None
    # a RankJob builds its own Jobs on the ranks: there is nothing to check here
    jobs = [job if isinstance(job, RankJob) else prepare(job, torchrun_ranks) for job in jobs]
    if torchrun_ranks is not None:
        parts = join_torchrun(jobs, timeout_s)
        if parts is None:
            return None
        device = ranks_placement(torchrun_ranks)[1].type  # "cuda" with a GPU for each rank of the node, else "cpu"
        return [merge(job, [p[i] for p in parts], device) for i, job in enumerate(jobs)]
    check_main_guard()
    by_count: dict[int, list[int]] = {}
    for i, job in enumerate(jobs):
        if isinstance(job, RankJob):  # a job of its own (pp_demo.instruments.bench) says it
            n_ranks = job.n_stages
        else:  # prepared: the split points are a tuple
            n_ranks = (len(cast(tuple[int, ...], job.split_points)) + 1) // job.stages_per_rank
        by_count.setdefault(n_ranks, []).append(i)
    results: list[Result | None] = [None] * len(jobs)
    for n_ranks, indices in by_count.items():  # one start per rank count
        parts = spawn_ranks([jobs[i] for i in indices], n_ranks, timeout_s)
        device = ranks_placement(n_ranks)[1].type
        for k, i in enumerate(indices):
            results[i] = merge(jobs[i], [p[k] for p in parts], device)
    return [result for result in results if result is not None]  # every index was filled
