"""``python -m pp_demo pipeline-speed`` runs and prints a ratio line per family; no timing is asserted."""

import re

import pytest

from pp_demo.cli import main


def test_on_the_cpu_it_times_the_tiny_models_and_prints_a_ratio_per_family(capsys):
    assert main(["pipeline-speed", "--device", "cpu", "--dtype", "fp32", "--warmup", "1", "--repeats", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "tiny size" in lines[0]
    ratio = r"model\.forward [\d.]+ ms, in-process pipeline [\d.]+ ms \(2 stages, 2 micro-batches\): ratio [\d.]+$"
    assert [line.split(" ")[0] for line in lines[1:]] == ["llama", "qwen2", "opt"]
    assert all(re.search(ratio, line) for line in lines[1:]), lines


def test_the_real_size_on_the_cpu_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["pipeline-speed", "--device", "cpu", "--size", "real"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--size real on the CPU" in err
