"""The benchmark's bookkeeping (its timings are printed by `python -m pp_demo bench`, never asserted)."""

import matplotlib

matplotlib.use("Agg")

from pp_demo.bench import BenchSize, draw_bench, format_bench, run_bench


def test_a_small_run_reports_every_mode_and_m_against_the_gpipe_ideal():
    result = run_bench(BenchSize(hidden=64, layers=2, seq=16, batch=4), micro_batches=(1, 2, 4), warmup=0, repeats=1)
    rows = {(r["mode"], r["micro_batches"]): r for r in result["pipeline"]}
    assert set(rows) == {(mode, m) for mode in ("inference", "training") for m in (1, 2, 4)}
    for (mode, m), row in rows.items():
        assert row["ideal"] == 2 * m / (m + 1)
        assert row["speedup"] == result["one_process_1_thread_s"][mode] / row["pipeline_s"]
        assert row["of_ideal"] == row["speedup"] / row["ideal"]
    assert {"platform", "processor", "cpus", "torch", "python"} <= set(result["machine"])
    text = format_bench(result)
    assert "of ideal" in text and len(text.splitlines()) == 4 + 6
    assert len(draw_bench(result).axes[0].lines) == 5   # ideal, two pipeline curves, two 2-thread lines
