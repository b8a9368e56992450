"""pp_demo.bench.files: what the bench command refuses before it times anything."""

import json
from pathlib import Path

import pytest

from pp_demo.bench.files import bench_files, check_bench_sizes, timed_runs
from pp_demo.errors import BadInput


@pytest.mark.parametrize(
    "hidden, layers, stages, said",
    [
        (16, 1, [2], "--layers 1: a pipeline needs 2 layers or more"),
        (16, 3, [2, 4], "--stages 4 with --layers 3: each stage holds at least one layer"),
        (12, 6, [2], "--hidden 12: the bench's model has 8 attention heads"),
    ],
)
def test_sizes_the_model_cannot_take_are_refused_in_the_flags_words(hidden, layers, stages, said):
    with pytest.raises(BadInput, match=said):
        check_bench_sizes(hidden, layers, stages)
    check_bench_sizes(16, 6, [2, 3])


def test_the_files_default_to_results_tmp_and_a_folder_takes_bench_cpu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert bench_files(None, 1, False) == (Path("results/tmp/bench_cpu.json"), Path("results/tmp/bench_cpu.png"))
    Path("runs").mkdir()
    assert bench_files("runs", 1, False) == (Path("runs/bench_cpu.json"), Path("runs/bench_cpu.png"))
    assert bench_files("mine/run1", 1, False) == (Path("mine/run1.json"), Path("mine/run1.png"))


def test_a_record_of_more_timed_runs_is_kept_without_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine.json").write_text(json.dumps({"settings": {"stages": [2, 3], "micro_batches": [2], "repeats": 3}}))
    assert timed_runs([2, 3], [2], 3) == 6
    with pytest.raises(BadInput, match="holds 6 timed runs, this run would write 2"):
        bench_files("mine", 2, False)
    bench_files("mine", 2, True)
