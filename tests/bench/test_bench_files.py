"""pp_demo.instruments.bench.files: the files the bench command writes, checked before it times anything."""

import json
from pathlib import Path

import pytest

from pp_demo.errors import BadInput
from pp_demo.instruments.bench.files import bench_files, timed_runs


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
