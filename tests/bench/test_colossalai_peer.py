"""The benchmark's ColossalAI row: made from its ranks' timed steps as pp_demo's rows are, and set
beside pp_demo's two-rank row.

The timing itself is not tested (no timing in tests); what is tested is how recorded steps become
the row (the fastest step, the baseline, the limits) and what is printed.
"""

import pytest

from pp_demo.instruments.bench.bounds import limit_speedup
from pp_demo.instruments.bench.colossalai_peer import ENGINE, peer_lines, peer_rows

ONE_PROCESS = {"training/0": 3.0, "training/2": 3.3, "training/4": 3.6}
PP_DEMO_ROWS = [
    {"p": 2, "m": 2, "mode": "training", "pipeline_s": 2.0},
    {"p": 2, "m": 2, "mode": "inference", "pipeline_s": 0.7},
    {"p": 3, "m": 4, "mode": "training", "pipeline_s": 1.5},
]


def _steps(*walls: float) -> list[list[tuple]]:
    """Two ranks' steps of the given lengths: rank 0 computes the first half, rank 1 the second."""
    rank0 = [(10.0 * k, 10.0 * k + w, [("F", 10.0 * k, 10.0 * k + w / 2)]) for k, w in enumerate(walls)]
    rank1 = [(10.0 * k, 10.0 * k + w, [("F", 10.0 * k + w / 2, 10.0 * k + w)]) for k, w in enumerate(walls)]
    return [rank0, rank1]


def test_the_row_is_its_fastest_step_against_the_best_one_process_run_and_pp_demos_two_rank_row():
    rows = peer_rows({2: _steps(2.6, 2.5), 4: _steps(2.4)}, ONE_PROCESS, PP_DEMO_ROWS, 2.0)
    first, second = rows
    assert (first["engine"], first["m"], first["mode"], first["p"]) == (ENGINE, 2, "training", 2)
    assert first["colossalai_s"] == first["pipeline_s"] == 2.5 and first["steps_s"] == [2.6, 2.5]
    # the best of the whole batch (3.0), the micro-batches in turn (3.3) and its own compute (2.5)
    assert (first["baseline_s"], first["baseline_from"]) == (2.5, "pipeline_compute_summed")
    assert first["speedup"] == 1.0 and first["limit"] == pytest.approx(limit_speedup(2, 2, 2.0), abs=1e-4)
    assert first["of_micro_batch_limit"] == pytest.approx(3.3 / first["limit"] / 2.5, abs=1e-4)
    assert (first["pp_demo_s"], first["colossalai_over_pp_demo"]) == (2.0, 1.25)
    # m = 4 has no two-rank training row of pp_demo here (only p = 3): no ratio is made up
    assert (second["pp_demo_s"], second["colossalai_over_pp_demo"]) == (None, None)


def test_the_lines_give_the_ratio_and_nothing_without_rows():
    lines = peer_lines(peer_rows({2: _steps(2.5)}, ONE_PROCESS, PP_DEMO_ROWS, 2.0))
    assert "m = 2: ColossalAI 2.500 s" in lines[1] and "ColossalAI/pp_demo 1.25" in lines[1]
    assert peer_lines([]) == []
