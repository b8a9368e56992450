"""The writing commands (train-study, bench, verify-pr) check where they write before they work,
and a run without --out never replaces a committed results file.

Tests run as root here, and root writes into read-only folders: a place that cannot take a
file is a file where a folder is needed, a folder where a file is needed, or a folder whose
write check is monkeypatched to fail. The work itself is replaced by a function that fails
the test if it is ever called, so "refused before any work" is what each refusal shows.
"""

import json
import shutil
from pathlib import Path

import pytest
import transformers

import pp_demo.instruments.bench
import pp_demo.instruments.pull_request.verify as verify_pr
import pp_demo.output_paths
import pp_demo.training.study as study
from pp_demo import cli

REPO = Path(__file__).resolve().parents[1]
STUDY_NAME = f"training_study_{transformers.__version__}.json"
COMMITTED = ["bench_cpu.json", "bench_cpu.png", "verify_pr.json", STUDY_NAME]
WRITERS = {  # subcommand -> (its extra arguments, the function that does the minutes of work)
    "train-study": ([], (study, "run_study")),
    "bench": ([], (pp_demo.instruments.bench, "run_bench")),
    "verify-pr": ([], (verify_pr, "verify_pr")),
}


def _error(capsys, *argv):
    with pytest.raises(SystemExit) as stopped:
        cli.main(list(argv))
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.fixture
def no_work(monkeypatch):
    """Every writer's work, replaced by a failure: a refusal must come before it."""

    def work(*args, **kwargs):
        pytest.fail("the work started before the output path was checked")

    for module, name in (target for _, target in WRITERS.values()):
        monkeypatch.setattr(module, name, work)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A folder like the checkout to run in: ``results/`` holding copies of the committed files."""
    (tmp_path / "results").mkdir()
    for name in COMMITTED:
        if (REPO / "results" / name).exists():
            shutil.copy(REPO / "results" / name, tmp_path / "results" / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder, "results").glob("*.*"))}


# ------------------------------------------------------------------ where it cannot write


@pytest.mark.parametrize("job", list(WRITERS))
def test_an_out_inside_a_file_is_refused_before_any_work(capsys, checkout, no_work, job):
    Path("a_file").write_text("not a folder\n")
    line = _error(capsys, job, "--out", "a_file/inside")
    assert line.startswith("python -m pp_demo: error: --out a_file/inside") and "is a file" in line


@pytest.mark.parametrize("job", list(WRITERS))
def test_an_out_in_a_read_only_folder_is_refused_before_any_work(capsys, checkout, no_work, monkeypatch, job):
    Path("read_only").mkdir()
    real = pp_demo.output_paths._can_write_in
    monkeypatch.setattr(
        pp_demo.output_paths, "_can_write_in", lambda folder: folder.name != "read_only" and real(folder)
    )
    line = _error(capsys, job, "--out", "read_only/out")
    assert "--out read_only/out: cannot write in read_only (read-only?)" in line


def test_train_study_refuses_a_file_where_its_folder_goes(capsys, checkout, no_work):
    Path("a_file").write_text("\n")
    assert "--out a_file is a file: train-study writes training_study_" in _error(
        capsys, "train-study", "--out", "a_file"
    )


def test_bench_and_verify_pr_refuse_a_folder_where_their_file_goes(capsys, checkout, no_work):
    Path("out", "bench_cpu.json").mkdir(parents=True)
    assert "bench_cpu.json is a folder, not a file" in _error(capsys, "bench", "--out", "out")
    Path("out", "verify_pr.json").mkdir()
    assert "verify_pr.json is a folder, not a file" in _error(capsys, "verify-pr", "--out", "out")


def test_verify_pr_refuses_a_cache_that_is_a_file(capsys, checkout, no_work):
    Path("cache").write_text("\n")
    assert "--cache cache is a file: give a folder" in _error(capsys, "verify-pr", "--cache", "cache")


def test_verify_pr_refuses_a_read_only_empty_cache_instead_of_blaming_the_network(
    capsys, checkout, no_work, monkeypatch
):
    Path("cache").mkdir()
    monkeypatch.setattr(pp_demo.output_paths, "_can_write_in", lambda folder: folder.name != "cache")
    line = _error(capsys, "verify-pr", "--cache", "cache")
    assert "--cache cache: cannot write in cache (read-only?): it holds no patched trees yet" in line
    assert "network" not in line


def test_verify_pr_refuses_a_wheelhouse_that_does_not_exist(capsys, checkout, no_work):
    assert "--wheelhouse /nonexistent is not a folder" in _error(capsys, "verify-pr", "--wheelhouse", "/nonexistent")


# ------------------------------------------------------------------ a folder means "write inside it"


@pytest.fixture
def quick_bench(monkeypatch):
    """The benchmark's work replaced by its committed result (the writing is what is tested)."""
    result = json.loads((REPO / "results" / "bench_cpu.json").read_text())
    monkeypatch.setattr(pp_demo.instruments.bench, "run_bench", lambda *args, **kwargs: result)
    return result


@pytest.mark.parametrize("out", ["some/folder/", "existing"])
def test_bench_writes_inside_a_folder(capsys, checkout, quick_bench, out):
    Path("existing").mkdir()
    assert cli.main(["bench", "--out", out]) == 0
    folder = Path(out)
    assert json.loads((folder / "bench_cpu.json").read_text()) == quick_bench
    assert (folder / "bench_cpu.png").read_bytes().startswith(b"\x89PNG")
    assert not Path(str(folder).rstrip("/") + ".json").exists()


def test_bench_with_a_path_writes_path_json_and_png(capsys, checkout, quick_bench):
    assert cli.main(["bench", "--out", "mine/run1"]) == 0
    assert Path("mine/run1.json").is_file() and Path("mine/run1.png").is_file()


# ------------------------------------------------------------------ the committed results are kept


@pytest.fixture
def quick_study(monkeypatch):
    monkeypatch.setattr(study, "run_study", lambda settings, progress=None: {"seeds": list(settings.seeds)})


@pytest.fixture
def quick_verify(monkeypatch):
    monkeypatch.setattr(verify_pr, "verify_pr", lambda cache, wheelhouse: {"claims": []})


def test_default_runs_never_overwrite_a_committed_results_file(
    capsys, checkout, quick_bench, quick_study, quick_verify
):
    before = _snapshot(checkout)
    assert set(before) >= {"bench_cpu.json", "verify_pr.json", STUDY_NAME}
    for job in WRITERS:
        assert cli.main([job]) == 0
    assert _snapshot(checkout) == before
    scratch = checkout / "results" / "tmp"
    assert sorted(p.name for p in scratch.iterdir()) == sorted(
        ["bench_cpu.json", "bench_cpu.png", "verify_pr.json", STUDY_NAME]
    )
    out = capsys.readouterr().out
    assert f"the committed results/{STUDY_NAME} is kept: --out results replaces it" in out


def test_every_writer_defaults_outside_the_committed_files():
    parser = cli.build_parser()
    for job in WRITERS:
        assert parser.parse_args([job]).out is None  # resolved to results/tmp by the command
    assert Path("results/tmp") == pp_demo.output_paths.SCRATCH
    assert "/results/tmp/" in (REPO / ".gitignore").read_text().split()


def test_a_study_of_fewer_seeds_than_the_committed_one_says_so_and_writes_elsewhere(capsys, checkout, quick_study):
    committed = json.loads((checkout / "results" / STUDY_NAME).read_text())
    before = _snapshot(checkout)
    assert cli.main(["train-study", "--seeds", "1", "--out", "results"]) == 0
    out = capsys.readouterr().out
    n = len(committed["settings"]["seeds"])
    assert f"the committed results/{STUDY_NAME} has {n} seeds, this run 1: writing to results/tmp" in out
    assert _snapshot(checkout) == before
    assert json.loads((checkout / "results" / "tmp" / STUDY_NAME).read_text()) == {"seeds": [0]}


def test_out_naming_the_committed_file_replaces_it(capsys, checkout, quick_bench, quick_study, quick_verify):
    n = len(json.loads((checkout / "results" / STUDY_NAME).read_text())["settings"]["seeds"])
    assert cli.main(["train-study", "--seeds", str(n), "--out", "results"]) == 0
    assert json.loads((checkout / "results" / STUDY_NAME).read_text()) == {"seeds": list(range(n))}
    assert cli.main(["verify-pr", "--out", "results/verify_pr.json"]) == 0
    assert json.loads((checkout / "results" / "verify_pr.json").read_text()) == {"claims": []}


# ------------------------------------------------------------------ verify-pr's progress


def test_verify_pr_prints_one_progress_line_per_variant(capsys, tmp_path, monkeypatch):
    from pp_demo.instruments.pull_request.sdists import SDISTS, VARIANTS

    class Done:  # a worker that has finished: its output file holds what it saw
        returncode = 0

        def communicate(self):
            return "", ""

    def worker(stem, trees, folder):
        out = folder / f"{stem}.out.json"
        out.write_text(json.dumps({"variants": {}}))
        return Done(), out

    monkeypatch.setattr(verify_pr, "variant_tree", lambda requirement, variant, cache, wheelhouse: tmp_path)
    monkeypatch.setattr(verify_pr, "_start_worker", worker)
    verify_pr.run_workers(tmp_path)
    lines = capsys.readouterr().err.splitlines()
    for stem in SDISTS.values():
        for variant in VARIANTS:
            assert sum(line == f"verify-pr: {stem}, variant {variant}: tree ready" for line in lines) == 1
    assert len(lines) == len(SDISTS) * len(VARIANTS) + 1 + len(SDISTS)  # + the workers' start and ends


def test_gpu_check_refuses_an_out_it_cannot_write_before_any_step(capsys, checkout, monkeypatch):
    from pp_demo.workshop import gpu_check

    monkeypatch.setattr(gpu_check, "visible_gpus", lambda: ["a GPU"])  # as on a GPU box
    monkeypatch.setattr(gpu_check, "run_step", lambda step: pytest.fail("a step ran before the check"))
    Path("a_file").write_text("\n")
    assert "--out a_file/gpu_check.json: a_file is a file, not a folder" in _error(
        capsys, "gpu-check", "--out", "a_file/gpu_check.json"
    )


# ------------------------------------------------------------------ a record of more runs is kept


def test_a_study_of_more_seeds_in_any_folder_is_kept_without_force(capsys, checkout, quick_study):
    Path("mine").mkdir()
    (Path("mine") / STUDY_NAME).write_text(json.dumps({"settings": {"seeds": [0, 1, 2]}}))
    line = _error(capsys, "train-study", "--seeds", "1", "--out", "mine")
    assert f"--out mine/{STUDY_NAME} holds 3 seeds, this run would write 1" in line and "--force" in line
    assert json.loads((Path("mine") / STUDY_NAME).read_text()) == {"settings": {"seeds": [0, 1, 2]}}
    assert cli.main(["train-study", "--seeds", "1", "--out", "mine", "--force"]) == 0
    assert json.loads((Path("mine") / STUDY_NAME).read_text()) == {"seeds": [0]}


def test_a_bench_file_of_more_timed_runs_is_kept_without_force(capsys, checkout, no_work):
    shutil.copy(REPO / "results" / "bench_cpu.json", "mine.json")  # 2 x 3 configurations, 3 repeats: 18 runs
    line = _error(capsys, "bench", "--out", "mine", "--stages", "2", "--repeats", "1")
    assert "--out mine.json holds 18 timed runs, this run would write 3" in line


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--layers", "1", "--stages", "2"], "--layers 1: a pipeline needs 2 layers or more (one per stage)"),
        (["--layers", "3", "--stages", "4"], "--stages 4 with --layers 3: each stage holds at least one layer"),
        (["--hidden", "3"], "--hidden 3: the bench's model has 8 attention heads: give a multiple of 8"),
    ],
)
def test_bench_sizes_out_of_range_are_named_in_the_flags_words(capsys, checkout, no_work, argv, expected):
    assert expected in _error(capsys, "bench", *argv)


@pytest.mark.parametrize("seeds", ["0", "-2"])
def test_a_study_of_no_seeds_is_refused(capsys, checkout, no_work, seeds):
    assert "--seeds is an integer of at least 1 and at most 1000" in _error(capsys, "train-study", "--seeds", seeds)


def test_the_engine_checks_its_out_and_timeout_before_the_ranks_start(capsys, checkout, monkeypatch):
    import pp_demo.instruments.engine.cli as engine_cli

    monkeypatch.setattr(engine_cli, "run_trees", lambda *a, **k: pytest.fail("the ranks started"))
    Path("a_file").write_text("not a folder\n")
    assert "is a file" in _error(capsys, "colossalai-engine", "--out", "a_file/inside/run.json")
    for timeout in ("0", "-1", "inf"):
        line = _error(capsys, "colossalai-engine", "--case-timeout", timeout)
        assert "--case-timeout is a number of seconds more than 0" in line
    Path("engine.json").write_text(json.dumps({"unpatched": {"records": [{}] * 50}}))
    assert "holds 50 case records" in _error(capsys, "colossalai-engine", "--out", "engine.json")
