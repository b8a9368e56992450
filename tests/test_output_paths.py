"""pp_demo.output_paths in itself: the study's folder and the JSON writer (the commands that use
them are tested through the command line in tests/test_cli_writers.py)."""

import json
import threading
from pathlib import Path

import pytest

from pp_demo.errors import BadInput
from pp_demo.output_paths import SCRATCH, study_folder, study_seeds, write_json

NAME = "training_study_x.json"


def _study(path, seeds):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": {"seeds": list(range(seeds))}}))


def test_the_study_writes_under_results_tmp_by_default_and_into_the_folder_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert study_folder(None, NAME, 3, False) == SCRATCH
    assert study_folder("mine", NAME, 3, False) == Path("mine")


def test_a_committed_study_of_more_seeds_sends_the_run_to_results_tmp_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _study(tmp_path / "results" / NAME, 5)
    assert study_folder("results", NAME, 2, False) == SCRATCH
    assert f"the committed results/{NAME} has 5 seeds, this run 2: writing to results/tmp" in capsys.readouterr().out
    assert study_folder("results", NAME, 5, False) == Path("results")
    assert study_folder("results", NAME, 2, True) == Path("results")


def test_the_study_refuses_a_file_for_its_folder_and_a_record_of_more_seeds_elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("a_file").write_text("\n")
    with pytest.raises(BadInput, match="--out a_file is a file: train-study writes"):
        study_folder("a_file", NAME, 1, False)
    _study(tmp_path / "mine" / NAME, 3)
    with pytest.raises(BadInput, match="holds 3 seeds, this run would write 1"):
        study_folder("mine", NAME, 1, False)


def test_write_json_creates_the_folder_and_ends_with_a_newline(tmp_path):
    write_json(tmp_path / "a" / "b.json", {"x": [1]})
    assert (tmp_path / "a" / "b.json").read_text() == '{\n "x": [\n  1\n ]\n}\n'


def _record(seeds):
    return {"settings": {"seeds": list(range(seeds))}}


def test_two_studies_started_together_the_smaller_cannot_replace_the_larger_without_force(tmp_path):
    # both runs check the folder before either writes (nothing there yet), then the 4-seed run
    # writes first: the 1-seed run, writing second, is refused at its write
    folder = tmp_path / "out"
    assert study_folder(folder, NAME, 4, False) == folder and study_folder(folder, NAME, 1, False) == folder
    write_json(folder / NAME, _record(4), "seeds", study_seeds)
    with pytest.raises(BadInput, match="holds 4 seeds, this run would write 1: replacing it with fewer takes --force"):
        write_json(folder / NAME, _record(1), "seeds", study_seeds)
    assert json.loads((folder / NAME).read_text()) == _record(4)
    write_json(folder / NAME, _record(1), "seeds", study_seeds, force=True)
    assert json.loads((folder / NAME).read_text()) == _record(1)
    assert [p.name for p in folder.iterdir()] == [NAME]  # no lock or half-written file left beside it


def test_concurrent_writers_leave_the_largest_record(tmp_path):
    path = tmp_path / NAME
    outcomes = []

    def write(seeds):
        try:
            write_json(path, _record(seeds), "seeds", study_seeds)
            outcomes.append(seeds)
        except BadInput:
            outcomes.append(-seeds)

    threads = [threading.Thread(target=write, args=(seeds,)) for seeds in (1, 4, 2, 4, 1, 3) * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert study_seeds(json.loads(path.read_text())) == 4 and len(outcomes) == len(threads)
