"""The benchmark's bookkeeping and its committed results. Nothing here times anything:
timings are measured by ``python -m pp_demo bench`` and only read back here.

The bound rule tested on the committed file (``pp_demo.bench.BOUND_RULE``): every row's
``of_ideal`` is at most 1 exactly as stored (the baseline is the best one-thread run of
the same work), and, in a run measured quietly, ``of_limit`` at most 1 + 0.05 (its
capacity c is measured apart; on a busy machine it measures the other users too).
"""

import math
from pathlib import Path

import pytest

from pp_demo.bench import (
    BenchSize,
    busy_stages,
    check_bench,
    format_bench,
    ideal_speedup,
    limit_speedup,
    load_results,
    readme_block,
    summary_lines,
)
from pp_demo.bench.breakdown import pipeline_row, step_breakdown
from pp_demo.figures.bench import draw_bench

RESULTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "results.md"
PARTS = ("compute_s", "idle_s", "p2p_wait_s", "bookkeeping_s")


@pytest.fixture(scope="module")
def results():
    return load_results()


# ---------------------------------------------------------------- the bounds, from their definition


@pytest.mark.parametrize(
    "p, m, slots", [(2, 1, [1, 1]), (2, 4, [1, 2, 2, 2, 1]), (3, 2, [1, 2, 2, 1]), (3, 4, [1, 2, 3, 3, 2, 1])]
)
def test_gpipe_keeps_this_many_stages_busy_per_slot(p, m, slots):
    assert busy_stages(p, m) == slots


def test_the_ideal_is_p_m_over_m_plus_p_minus_1_and_the_limit_meets_it_with_p_free_cores():
    assert ideal_speedup(2, 8) == 16 / 9 and ideal_speedup(3, 8) == 24 / 10
    assert limit_speedup(2, 8, 2.0) == pytest.approx(16 / 9)
    # three ranks on two cores: the 6 slots with three busy stages run at the rate of two
    assert limit_speedup(3, 8, 2.0) == pytest.approx(24 / (1 + 1 + 6 * 1.5 + 1 + 1))
    # c = 1.5: the 7 slots with two busy stages take 2 / 1.5 each
    assert limit_speedup(2, 8, 1.5) == pytest.approx(16 / (1 + 7 * 2 / 1.5 + 1))
    # a loaded machine where two processes give less than one alone: one busy stage still runs at one
    assert limit_speedup(2, 2, 0.5) == pytest.approx(4 / (1 + 2 / 0.5 + 1))
    with pytest.raises(ValueError, match=r"in \(0, 2\]"):
        limit_speedup(2, 4, 2.5)


# ---------------------------------------------------------------- the breakdown of one step


def test_every_second_of_a_step_falls_in_exactly_one_part():
    # rank 0: forward [0, 1], waits [1, 3] for rank 1's backward, which runs [2, 3]; rank 1
    # starts 0.5 late, waits [0.5, 1.2] (rank 0 computes until 1), forward [1.2, 2], backward [2, 3]
    steps = [
        (0.0, 3.0, [("F", 0.0, 1.0), ("W", 1.0, 3.0)]),
        (0.5, 3.0, [("W", 0.5, 1.2), ("F", 1.2, 2.0), ("B", 2.0, 3.0)]),
    ]
    step = step_breakdown(steps)
    assert step["wall_s"] == 3.0
    rank0, rank1 = step["ranks"]
    # rank 0's wait overlaps rank 1's computing over [1.2, 3]: 1.8 s idle, 0.2 s in transit
    assert (rank0["compute_s"], rank0["idle_s"], rank0["p2p_wait_s"], rank0["bookkeeping_s"]) == pytest.approx(
        (1.0, 1.8, 0.2, 0.0)
    )
    # rank 1: 0.5 s before its start, its wait overlaps rank 0's forward over [0.5, 1]
    assert (rank1["compute_s"], rank1["idle_s"], rank1["p2p_wait_s"], rank1["bookkeeping_s"]) == pytest.approx(
        (1.8, 1.0, 0.2, 0.0)
    )


def test_a_row_takes_the_best_baseline_and_the_fastest_step():
    steps = [
        [(0.0, 2.0, [("F", 0.0, 1.0)]), (5.0, 6.5, [("F", 5.0, 6.0)])],
        [(0.0, 2.0, [("F", 1.0, 2.0)]), (5.0, 6.5, [("F", 5.5, 6.5)])],
    ]
    row = pipeline_row(2, 2, "inference", "ScheduleGPipe", steps, {"one_process_whole_batch": 2.4}, 2.0)
    assert row["pipeline_s"] == 1.5 and row["steps_s"] == [2.0, 1.5]
    assert row["baseline_from"] == "pipeline_compute_summed" and row["baseline_s"] == 2.0
    assert row["of_ideal"] == pytest.approx(2.0 / 1.5 / (4 / 3), abs=1e-4)


# ---------------------------------------------------------------- the committed results file


def test_the_results_file_has_every_row_with_its_baseline_capacity_and_breakdown(results):
    settings = results["settings"]
    assert {2, 3} <= set(settings["stages"]) and {2, 4, 8} <= set(settings["micro_batches"])
    assert settings["threads_per_process"] == 1
    assert {"torch", "transformers", "python", "cpus"} <= set(results["versions"])
    assert all(len(results["load_average"][k]) == 3 for k in ("start", "end"))
    for cap in results["capacity"].values():
        assert cap["pair_s"] >= cap["alone_s"] and 0 < cap["c"] <= 2
    keys = [(r["p"], r["m"], r["mode"]) for r in results["rows"]]
    assert sorted(keys) == sorted(
        (p, m, mode) for p in settings["stages"] for m in settings["micro_batches"] for mode in settings["modes"]
    )
    for row in results["rows"]:
        assert row["baseline_s"] == min(row["baseline_candidates_s"].values())
        assert row["ideal"] == pytest.approx(row["p"] * row["m"] / (row["m"] + row["p"] - 1), abs=1e-4)
        assert row["limit"] <= row["ideal"]
        assert row["speedup"] == pytest.approx(row["baseline_s"] / row["pipeline_s"], rel=1e-3)
        assert len(row["breakdown"]) == row["p"]
        for rank in row["breakdown"]:
            assert all(rank[k] >= -1e-3 for k in PARTS)
            assert math.fsum(rank[k] for k in PARTS) == pytest.approx(row["pipeline_s"], abs=2e-3)
            assert rank["timeline"] and {kind for kind, _, _ in rank["timeline"]} <= {"F", "B", "L", "W"}


def test_no_ratio_exceeds_its_bound(results):
    from pp_demo.bench.report import measured_quietly

    quiet = measured_quietly(results)
    cpus = int(results["versions"]["cpus"])
    for row in results["rows"]:
        assert row["of_ideal"] <= 1, row
        # the work bound: cpus cores at capacity c run at most c times one process
        assert row["speedup"] <= results["capacity"][row["mode"]]["c"] * 1.05 or not quiet, row
        # the slot limit binds where every rank has a core of its own
        assert row["of_limit"] <= 1 + 0.05 or not quiet or row["p"] > cpus, row
    # a run on a busy machine says so wherever its numbers are printed
    assert ("busy machine" in " ".join(summary_lines(results)[:2])) == (not quiet)


def test_a_run_is_quiet_when_it_started_with_less_than_half_the_cpus_busy(results):
    from pp_demo.bench.report import measured_quietly

    assert measured_quietly(
        {
            **results,
            "load_average": {"start": [0.9, 3, 3], "end": [3, 3, 3]},
            "versions": {**results["versions"], "cpus": "2"},
        }
    )
    assert not measured_quietly(
        {
            **results,
            "load_average": {"start": [1.0, 0, 0], "end": [0, 0, 0]},
            "versions": {**results["versions"], "cpus": "2"},
        }
    )


def test_the_results_page_states_the_numbers_of_the_results_file(results):
    assert readme_block(results) in RESULTS_PAGE.read_text()


def test_the_summary_notebook_02_prints_has_one_line_per_row(results):
    lines = summary_lines()
    # the load, c, a two-line legend, the header, then a row per run (notebook 10 prints them)
    assert lines == summary_lines(results) and len(lines) == 5 + len(results["rows"])
    assert lines[4].split() == ["p", "m", "mode", "schedule", "speedup", "ideal", "of", "ideal", "limit", "of", "limit"]
    row = results["rows"][-1]
    assert lines[-1].split() == [
        str(row["p"]),
        str(row["m"]),
        row["mode"],
        row["schedule"],
        f"{row['speedup']:.2f}x",
        f"{row['ideal']:.2f}x",
        f"{row['of_ideal']:.2f}",
        f"{row['limit']:.2f}x",
        f"{row['of_limit']:.2f}",
    ]
    assert max(len(line) for line in lines) <= 88  # a room reads them off a projector
    peers = results.get("peers") or []  # ColossalAI's plugin beside pp_demo: a heading, then a line each
    assert len(format_bench(results).splitlines()) == 3 + 1 + len(results["rows"]) + (1 + len(peers) if peers else 0)
    assert [p["m"] for p in peers] == [2, 4, 8] and all(p["mode"] == "training" for p in peers)


def test_the_figure_shows_a_timeline_and_the_breakdown(results):
    top, bottom = draw_bench(results).axes
    assert {t.get_text() for t in top.get_legend().get_texts()} >= {"forward", "backward", "waiting on send/recv"}
    labels = {t.get_text() for t in bottom.get_legend().get_texts()}
    assert {"compute", "idle (bubble)", "waiting on send/recv", "bookkeeping"} <= labels


# ---------------------------------------------------------------- bad input, before anything starts


@pytest.mark.parametrize(
    "stages, micro, message", [((4,), (2,), "runs on 2..3 ranks"), ((2,), (3,), "does not split into 3 equal")]
)
def test_what_cannot_run_is_refused_in_one_line(stages, micro, message):
    # a loaded machine where two processes give less than one alone: one busy stage still runs at one
    assert limit_speedup(2, 2, 0.5) == pytest.approx(4 / (1 + 2 / 0.5 + 1))
    with pytest.raises(ValueError, match=message):
        check_bench(BenchSize(layers=3, batch=8), stages, micro, 0)


# ---------------------------------------------------------------- a tiny run, end to end


def test_a_tiny_run_times_every_rank_and_writes_a_row_per_mode():
    from pp_demo.bench import run_bench

    result = run_bench(
        BenchSize(hidden=32, layers=2, seq=8, batch=4), stages=(2,), micro_batches=(2,), warmup=0, repeats=1
    )
    assert [(r["p"], r["m"], r["mode"]) for r in result["rows"]] == [(2, 2, "inference"), (2, 2, "training")]
    inference, training = result["rows"]
    assert inference["schedule"] == "ScheduleGPipe"
    kinds = [{kind for kind, _, _ in rank["timeline"]} for rank in training["breakdown"]]
    assert len(kinds) == 2 and all({"F", "B"} <= k for k in kinds)  # both ranks ran forwards and backwards
    assert len(summary_lines(result)) == 5 + 2


def test_the_readme_block_is_rewritten_between_its_markers_only(tmp_path, results):
    from pp_demo.bench import write_readme_block
    from pp_demo.bench.report import check_readme

    readme = tmp_path / "README.md"
    readme.write_text("before\n<!-- bench:begin -->\nold numbers\n<!-- bench:end -->\nafter\n")
    write_readme_block(readme, results)
    assert readme.read_text() == f"before\n<!-- bench:begin -->\n{readme_block(results)}\n<!-- bench:end -->\nafter\n"
    readme.write_text("no markers\n")
    # a loaded machine where two processes give less than one alone: one busy stage still runs at one
    assert limit_speedup(2, 2, 0.5) == pytest.approx(4 / (1 + 2 / 0.5 + 1))
    with pytest.raises(ValueError, match="must be a file with one <!-- bench:begin -->"):
        check_readme(readme)


def test_the_results_file_is_the_checkouts_seen_from_its_root_or_a_folder_in_it(repo, tmp_path):
    # an installed pp_demo has no checkout beside it: the file is found from the current folder
    from pp_demo.bench.report import RESULTS, results_file
    from pp_demo.errors import BadInput

    assert results_file(repo) == repo / RESULTS
    assert results_file(repo / "notebooks") == repo / RESULTS  # where a notebook runs
    with pytest.raises(BadInput, match="run from the checkout"):
        results_file(tmp_path)
