"""The benchmark's ColossalAI row: its arithmetic against the benchmark's own baseline and row.

The timing itself is not tested (no timing in tests); what is tested is how a measured step is
set beside the one-process baseline and pp_demo's two-rank row, and what is printed.
"""

from pp_demo.bench.colossalai_peer import peer_lines, peer_rows

ONE_PROCESS = {"training/0": 3.0, "training/2": 2.5, "training/4": 2.8}
PP_DEMO_ROWS = [
    {"p": 2, "m": 2, "mode": "training", "pipeline_s": 2.0},
    {"p": 2, "m": 2, "mode": "inference", "pipeline_s": 0.7},
    {"p": 3, "m": 4, "mode": "training", "pipeline_s": 1.5},
]


def test_the_row_uses_the_best_one_process_run_and_pp_demos_two_rank_training_row():
    rows = peer_rows({2: 2.5, 4: 2.0}, ONE_PROCESS, PP_DEMO_ROWS)
    assert [(r["m"], r["baseline_s"], r["speedup"]) for r in rows] == [(2, 2.5, 1.0), (4, 2.8, 1.4)]
    assert (rows[0]["pp_demo_s"], rows[0]["colossalai_over_pp_demo"]) == (2.0, 1.25)
    # m = 4 has no two-rank training row of pp_demo here (only p = 3): no ratio is made up
    assert (rows[1]["pp_demo_s"], rows[1]["colossalai_over_pp_demo"]) == (None, None)


def test_the_lines_give_the_ratio_and_nothing_without_rows():
    lines = peer_lines(peer_rows({2: 2.5}, ONE_PROCESS, PP_DEMO_ROWS))
    assert "m = 2: ColossalAI 2.500 s" in lines[1] and "ColossalAI/pp_demo 1.25" in lines[1]
    assert peer_lines([]) == []
