"""The benchmark's bookkeeping and its committed results. Nothing here times anything:
timings are measured by ``python -m pp_demo bench`` and only read back here.

The bound rule tested on the committed file: every row's
``of_ideal`` is at most 1 exactly as stored (the baseline is the best one-thread run of
the same work), and, in a run measured quietly, ``of_limit`` at most 1 + 0.05 (its
capacity c is measured apart; on a busy machine it measures the other users too).
"""

import math
from pathlib import Path

import pytest

from pp_demo.errors import BadInput
from pp_demo.figures.bench import draw_bench
from pp_demo.instruments.bench import (
    BenchSize,
    busy_stages,
    check_bench,
    format_bench,
    ideal_speedup,
    limit_speedup,
    readme_block,
)
from pp_demo.instruments.bench.breakdown import phase_means, pipeline_row, step_breakdown
from pp_demo.instruments.bench.report import phase_table
from pp_demo.records.bench import load_results, micro_batch, summary_lines

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
    alone = {"inference/0": 2.4, "inference/2": 2.7}  # the whole batch, and m = 2 micro-batches in turn
    row = pipeline_row(2, 2, "inference", "ScheduleGPipe", steps, alone, 2.0)
    assert row["pipeline_s"] == 1.5 and row["steps_s"] == [2.0, 1.5]
    assert row["baseline_from"] == "pipeline_compute_summed" and row["baseline_s"] == 2.0
    assert row["of_ideal"] == pytest.approx(2.0 / 1.5 / (4 / 3), abs=1e-4)
    # the limit built from what it assumes: the two micro-batches in turn took 2.7 s in one
    # process, 1.125 times the whole batch; at the limit speedup 4/3 they would take 2.025 s
    assert row["micro_batch_cost"] == pytest.approx(2.7 / 2.4, abs=1e-4)
    assert row["micro_batch_limit_s"] == pytest.approx(2.7 / (4 / 3), abs=1e-4)
    assert row["of_micro_batch_limit"] == pytest.approx(2.025 / 1.5, abs=1e-4)


def test_a_step_keeps_each_ranks_cpu_time_per_kind_and_the_phases_are_per_micro_batch():
    # rank 0: two forwards of 1 s (0.8 s of CPU each), one backward of 2 s; rank 1 scores each
    # forward with a loss of 0.1 s, which counts with the forward (ColossalAI computes it inside)
    steps = [
        (0.0, 5.0, [("F", 0.0, 1.0), ("F", 1.0, 2.0), ("B", 2.0, 4.0)], {"F": 1.6, "B": 1.9, "step": 3.6}),
        (0.0, 5.0, [("F", 1.0, 1.5), ("L", 1.5, 1.6), ("F", 2.0, 2.5), ("L", 2.5, 2.6)], {"F": 1.0, "L": 0.2}),
    ]
    ranks = step_breakdown(steps)["ranks"]
    assert ranks[0]["cpu_s"] == {"F": 1.6, "B": 1.9, "step": 3.6}
    means = phase_means(ranks)
    assert means[0] == pytest.approx({"F_s": 1.0, "B_s": 2.0, "F_cpu_s": 0.8, "B_cpu_s": 1.9})
    assert means[1] == pytest.approx({"F_s": 0.6, "B_s": 0.0, "F_cpu_s": 0.6, "B_cpu_s": 0.0})
    # a step recorded without CPU times (an older file) has its wall-clock phases only
    assert phase_means(step_breakdown([s[:3] for s in steps])["ranks"])[0] == pytest.approx({"F_s": 1.0, "B_s": 2.0})


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
        # the micro-batch limit: the m micro-batches in turn, one process, over the limit speedup
        mb = micro_batch(results, row)
        in_turn, whole = (results["one_process_s"][f"{row['mode']}/{m}"] for m in (row["m"], 0))
        assert mb["micro_batch_cost"] == pytest.approx(in_turn / whole, rel=1e-3)  # of rounded times
        assert mb["of_micro_batch_limit"] == pytest.approx(in_turn / row["limit"] / row["pipeline_s"], rel=1e-3)
        assert len(row["breakdown"]) == row["p"]
        for rank in row["breakdown"]:
            assert all(rank[k] >= -1e-3 for k in PARTS)
            assert math.fsum(rank[k] for k in PARTS) == pytest.approx(row["pipeline_s"], abs=2e-3)
            assert rank["timeline"] and {kind for kind, _, _ in rank["timeline"]} <= {"F", "B", "L", "W"}


def test_no_ratio_exceeds_its_bound(results):
    from pp_demo.records.bench import measured_quietly

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
    from pp_demo.records.bench import measured_quietly

    # a file from before the quiet guard: judged by its start's load (a guarded run says so itself)
    results = {k: v for k, v in results.items() if k != "quiet_start"}
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
    phases = len(phase_table(results))  # their phases, rank by rank: a heading and a header first
    printed = format_bench(results).splitlines()
    peer_lines = (1 + len(peers) if peers else 0) + (2 + phases if phases else 0)
    assert len(printed) == 3 + 3 + len(results["rows"]) + peer_lines
    assert [p["m"] for p in peers] == [2, 4, 8] and all(p["mode"] == "training" for p in peers)


def test_colossalai_beside_pp_demo_is_in_the_file_with_the_ratio_of_their_step_times(results):
    for peer in results["peers"]:
        ours = next(r for r in results["rows"] if (r["p"], r["m"], r["mode"]) == (2, peer["m"], "training"))
        assert peer["pp_demo_s"] == ours["pipeline_s"]
        assert peer["colossalai_over_pp_demo"] == pytest.approx(peer["colossalai_s"] / ours["pipeline_s"], abs=1e-4)
        if "breakdown" in peer:  # timed by phase (a file from before has the step times only)
            assert peer["colossalai_s"] == peer["pipeline_s"] == min(peer["steps_s"])
            assert len(peer["breakdown"]) == 2


def test_the_figure_shows_a_timeline_the_breakdown_and_the_engines_side_by_side(results):
    top, middle, bottom = draw_bench(results).axes
    assert {t.get_text() for t in top.get_legend().get_texts()} >= {"forward", "backward", "waiting on send/recv"}
    labels = {t.get_text() for t in middle.get_legend().get_texts()}
    assert {"compute", "idle (bubble)", "waiting on send/recv", "bookkeeping"} <= labels
    # per m, pp_demo's step and ColossalAI's, and the two limits as times
    labels = {t.get_text() for t in bottom.get_legend().get_texts()}
    assert {"pp_demo (torch pipelining)", "ColossalAI's plugin", "limit", "micro-batch limit"} <= labels
    assert [t.get_text() for t in bottom.get_xticklabels()] == [f"m = {p['m']}" for p in results["peers"]]
    heights = sorted(round(b.get_height(), 4) for b in bottom.patches)
    assert heights == sorted([p["pp_demo_s"] for p in results["peers"]] + [p["colossalai_s"] for p in results["peers"]])


# ---------------------------------------------------------------- bad input, before anything starts


@pytest.mark.parametrize(
    "size, stages, micro, warmup, said",
    [
        (BenchSize(layers=1), (2,), (2,), 0, "--layers 1: a pipeline needs 2 layers or more"),
        (BenchSize(layers=3), (2, 4), (2,), 0, "--stages 4 with --layers 3: each stage holds at least one layer"),
        (BenchSize(hidden=12), (2,), (2,), 0, "--hidden 12: the bench's model has 8 attention heads"),
        (BenchSize(batch=8), (2,), (3,), 0, "--micro-batches 3 with --batch 8: the batch does not split into 3"),
        (BenchSize(), (2,), (2,), -1, "--warmup -1: the warm-up count is 0 or more"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line_in_the_flags_words(size, stages, micro, warmup, said):
    with pytest.raises(BadInput, match=said):
        check_bench(size, stages, micro, warmup)
    check_bench(BenchSize(hidden=16, layers=6), (2, 3), (2, 4, 8), 0)


# ---------------------------------------------------------------- a tiny run, end to end


@pytest.mark.slow  # every mode on ranks, timed: over 20 s on 2 cores
def test_a_tiny_run_times_every_rank_and_writes_a_row_per_mode():
    from pp_demo.instruments.bench import run_bench

    result = run_bench(
        BenchSize(hidden=32, layers=2, seq=8, batch=4),
        stages=(2,),
        micro_batches=(2,),
        warmup=0,
        repeats=1,
        rounds=1,
        wait_s=0,
    )
    assert [(r["p"], r["m"], r["mode"]) for r in result["rows"]] == [(2, 2, "inference"), (2, 2, "training")]
    inference, training = result["rows"]
    assert inference["schedule"] == "ScheduleGPipe"
    kinds = [{kind for kind, _, _ in rank["timeline"]} for rank in training["breakdown"]]
    assert len(kinds) == 2 and all({"F", "B"} <= k for k in kinds)  # both ranks ran forwards and backwards
    assert len(summary_lines(result)) == 5 + 2
    assert {"of_micro_batch_limit", "micro_batch_cost"} <= set(training)
    assert result["quiet_start"]["threshold"] == 0.5 and "forced" in result["quiet_start"]
    assert all({"F", "B", "step"} <= set(rank["cpu_s"]) for rank in training["breakdown"])


def test_the_docs_block_is_rewritten_between_its_markers_only(results):
    from tools.bench_docs import rendered

    page = "before\n<!-- bench:begin -->\nold numbers\n<!-- bench:end -->\nafter\n"
    block = readme_block(results)
    assert rendered(page, results) == f"before\n<!-- bench:begin -->\n{block}\n<!-- bench:end -->\nafter\n"
    with pytest.raises(ValueError, match="must hold one <!-- bench:begin -->"):
        rendered("no markers\n", results)


def test_the_results_file_is_the_checkouts_seen_from_its_root_or_a_folder_in_it(repo, tmp_path):
    # an installed pp_demo has no checkout beside it: the file is found from the current folder
    from pp_demo.records.bench import RESULTS, results_file

    assert results_file(repo) == repo / RESULTS
    assert results_file(repo / "notebooks") == repo / RESULTS  # where a notebook runs
    with pytest.raises(BadInput, match="run from the checkout"):
        results_file(tmp_path)
