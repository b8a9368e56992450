"""A steady run, or none: a run's noise is read from its own repeated steps, and a run noisier
than 5 % does not replace the committed results without --force."""

import copy
import json

import pytest

from pp_demo import cli
from pp_demo.instruments.bench.steadiness import STEADY, steadiness, step_noise


def _run(pipeline_steps, peer_steps):
    return {"rows": [{"steps_s": s} for s in pipeline_steps], "peers": [{"steps_s": s} for s in peer_steps]}


def test_the_noise_is_the_median_over_rows_of_each_rows_median_step_over_its_fastest():
    # rows: median 1.0 over fastest 1.0 -> 0; 1.1 over 1.0 -> 0.1; ColossalAI's: 2.3 over 2.0 -> 0.15
    run = _run([[1.0, 1.0, 1.2], [1.2, 1.0, 1.1]], [[2.0, 2.6, 2.2, 2.4]])
    assert step_noise(run) == pytest.approx(0.1)


def test_one_slow_step_in_a_row_is_not_noise():
    assert step_noise(_run([[1.0, 1.0, 1.0, 1.0, 1.0, 3.0]], [])) == 0


def test_a_run_noisier_than_five_percent_is_unsteady_and_forced_only_by_force():
    assert STEADY == 0.05
    noisy, steady = _run([[1.0, 1.06, 1.2]], []), _run([[1.0, 1.04, 1.2]], [])
    assert steadiness(noisy, force=False) == {"noise": 0.06, "threshold": 0.05, "steady": False, "forced": False}
    assert steadiness(noisy, force=True)["forced"]
    assert steadiness(steady, force=True) == {"noise": 0.04, "threshold": 0.05, "steady": True, "forced": False}


def test_the_committed_run_is_steady(repo):
    committed = json.loads((repo / "results" / "bench_cpu.json").read_text())
    assert steadiness(committed, force=False)["steady"]


@pytest.fixture
def noisy_bench(repo, tmp_path, monkeypatch):
    """In a folder like the checkout, the committed results, and a bench whose run is the committed
    one with every step after the fastest made 10 % slower."""
    import pp_demo.instruments.bench

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    committed = (repo / "results" / "bench_cpu.json").read_text()
    (tmp_path / "results" / "bench_cpu.json").write_text(committed)
    noisy = copy.deepcopy(json.loads(committed))
    for row in noisy["rows"] + noisy["peers"]:
        fastest = min(row["steps_s"])
        row["steps_s"] = [fastest] + [1.1 * fastest] * (len(row["steps_s"]) - 1)
    monkeypatch.setattr(pp_demo.instruments.bench, "run_bench", lambda *args, **kwargs: noisy)
    return committed


def test_a_noisy_run_for_the_committed_file_is_written_to_results_tmp_and_exits_1(noisy_bench, capsys, tmp_path):
    assert cli.main(["bench", "--out", "results"]) == 1
    assert (tmp_path / "results" / "bench_cpu.json").read_text() == noisy_bench
    kept = json.loads((tmp_path / "results" / "tmp" / "bench_cpu.json").read_text())
    assert kept["steadiness"] == {"noise": 0.1, "threshold": 0.05, "steady": False, "forced": False}
    assert "the committed results are kept: this run's steps lie 10% above their fastest" in capsys.readouterr().out


def test_force_lets_a_noisy_run_replace_the_committed_file_and_the_file_says_so(noisy_bench, tmp_path):
    assert cli.main(["bench", "--out", "results", "--force"]) == 0
    replaced = json.loads((tmp_path / "results" / "bench_cpu.json").read_text())
    assert replaced["steadiness"]["forced"] and not replaced["steadiness"]["steady"]
    assert not (tmp_path / "results" / "tmp").exists()


def test_the_results_page_says_how_noisy_the_run_was(noisy_bench, tmp_path):
    from pp_demo.instruments.bench.report import readme_block

    assert "(steady: the committed file needs 5% or less)" in readme_block(json.loads(noisy_bench))
    cli.main(["bench", "--out", "results", "--force"])
    forced = json.loads((tmp_path / "results" / "bench_cpu.json").read_text())
    assert "A row's median step lies 10% above its fastest, at the median over rows (noisy, forced" in readme_block(
        forced
    )


def test_the_bench_help_states_the_threshold_the_rule_applies():
    from tools.cli_reference import subcommands

    shown = " ".join(subcommands(cli.build_parser())["bench"].format_help().split())
    assert f"noisier than {STEADY:.0%}".replace("%", " %") in shown
