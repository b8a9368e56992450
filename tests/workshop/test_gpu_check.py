"""``python -m pp_demo gpu-check`` without a GPU: its plan, its one line, its record.

No CI machine has a GPU, so ``torch.cuda`` is monkeypatched to show 0, 1 or 2; the steps that
run are replaced by tiny commands. Expected values come from the issue's list of steps."""

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pp_demo.cli import build_parser, main
from pp_demo.workshop import gpu_check
from pp_demo.workshop.gpu_check import Step, plan, run_check

TWO_GPU_STEPS = {"reproduce --distributed, 2 ranks", "ColossalAI engine, NCCL, bf16", "ColossalAI engine, NCCL, fp16"}


class AcceptsEverything(argparse.ArgumentParser):
    """A stand-in for a tree that has every job (the engine run included)."""

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        return argparse.Namespace()


def see_gpus(monkeypatch, count):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Test GPU")


@pytest.fixture
def every_extra_installed(monkeypatch):
    """ColossalAI, nbval and DeepSpeed all present, whatever this venv holds (the transformers 5.x
    leg has no DeepSpeed), so only the GPU count decides what is skipped."""
    monkeypatch.setattr(gpu_check, "installed", lambda name: True)
    monkeypatch.setattr(gpu_check, "deepspeed_missing", lambda: None)


def test_without_a_gpu_it_says_so_in_one_line_exits_0_and_writes_nothing(monkeypatch, tmp_path, capsys):
    see_gpus(monkeypatch, 0)
    monkeypatch.chdir(tmp_path)
    assert main(["gpu-check"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and "no CUDA GPU" in out
    assert list(tmp_path.iterdir()) == []


def test_dry_run_lists_every_step_with_its_command(monkeypatch, capsys):
    see_gpus(monkeypatch, 0)
    assert main(["gpu-check", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "this machine sees no CUDA GPU; on a box with 2 GPUs the check would run:"
    for command in [
        "python -m pp_demo doctor",
        "python -m pp_demo reproduce --device cuda",
        "python -m pp_demo reproduce --distributed --device cuda",
        "python -m pp_demo families --device cuda",
        "python -m pp_demo colossalai-engine --backend nccl --dtype bf16",
        "python -m pp_demo colossalai-engine --backend nccl --dtype fp16",
        "python -m pp_demo real-size --device cuda --size real --dtype bf16",
        "python -m pp_demo pipeline-speed --device cuda --dtype bf16",
    ]:
        assert f"      {command}\n" in out
    for notebook in ["01_four_padding_rows", "05_training_impact", "09_pull_request"]:
        assert "--nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg" in out
        assert f"nbval {notebook} (timeout" in out
    assert "nbval 06_colossalai (skip: its ColossalAI forwards run on the CPU)" in out


def test_make_gpu_check_dry_run_lists_the_steps_and_runs_none(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    from tests.conftest import REPO

    done = subprocess.run(
        ["make", "-s", "--dry-run", "gpu-check", f"PYTHON={sys.executable}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "the check would run:" in done.stdout and "python -m pp_demo doctor" in done.stdout


def test_a_job_this_tree_lacks_is_not_available_in_one_line(monkeypatch):
    lacking = argparse.ArgumentParser()
    lacking.add_subparsers(dest="job").add_parser("doctor")  # no reproduce, no families
    steps = {s.name: s for s in plan(2, lacking)}
    assert steps["doctor"].skip is None
    assert steps["families, cuda"].skip == "not available in this tree"
    assert steps["ColossalAI engine, NCCL, bf16"].skip == "not available in this tree"


def test_this_trees_own_jobs_are_available(monkeypatch):
    steps = {s.name: s for s in plan(2, build_parser())}
    for name in ["doctor", "reproduce, in process, cuda", "reproduce --distributed, 2 ranks", "families, cuda"]:
        assert steps[name].skip is None, name


@pytest.mark.parametrize("count", [1, 2])
def test_steps_needing_two_gpus_are_skipped_on_one(monkeypatch, capsys, every_extra_installed, count):
    see_gpus(monkeypatch, count)
    steps = plan(count, AcceptsEverything())
    skipped = {s.name for s in steps if s.skip == "needs 2 GPUs"}
    assert skipped == (TWO_GPU_STEPS if count == 1 else set())
    assert {s.name for s in steps if s.skip} == skipped | {"nbval 06_colossalai"}
    monkeypatch.setattr(gpu_check, "plan", lambda n, parser, root: plan(n, AcceptsEverything(), root))
    main(["gpu-check", "--dry-run"])
    out = capsys.readouterr().out
    assert out.startswith(f"on this machine ({count} GPU{'s' if count == 2 else ''}) the check would run:")
    assert out.count("(skip: needs 2 GPUs)") == (3 if count == 1 else 0)


def test_the_colossalai_steps_say_when_colossalai_is_missing(monkeypatch):
    monkeypatch.setattr(gpu_check, "installed", lambda name: name != "colossalai")
    steps = {s.name: s for s in plan(2, AcceptsEverything())}
    assert steps["ColossalAI engine, NCCL, fp16"].skip.startswith("ColossalAI is not installed")


def test_the_deepspeed_notebook_says_when_deepspeed_is_missing(monkeypatch):
    """Notebook 11's stored outputs were made with DeepSpeed installed: without it the step is
    skipped with the reason, not run into a strict nbval failure."""
    monkeypatch.setattr(gpu_check, "installed", lambda name: True)  # DeepSpeed's own door decides, not this
    monkeypatch.setattr(gpu_check, "deepspeed_missing", lambda: "DeepSpeed is not installed")
    steps = {s.name: s for s in plan(2, AcceptsEverything())}
    assert steps["nbval 11_deepspeed"].skip == "deepspeed is not installed in this environment (make deepspeed)"
    assert steps["nbval 05_training_impact"].skip is None
    monkeypatch.setattr(gpu_check, "deepspeed_missing", lambda: None)  # found, beside the venv or not
    assert {s.name: s for s in plan(2, AcceptsEverything())}["nbval 11_deepspeed"].skip is None


def tiny_steps():
    python = ("-c",)
    return [
        Step("passes", (*python, "print('ok')"), 60),
        Step("fails", (*python, "import sys; sys.exit(3)"), 60),
        Step("hangs", (*python, "import time; time.sleep(600)"), 1),
        Step(
            "same on the cpu",
            (*python, "print('llama count row matches model.forward: [False, True]')"),
            60,
            cpu_twin=(*python, "print('llama count row matches model.forward: [False, True]')"),
        ),
        Step(
            "differs from the cpu",
            (*python, "print('llama count row matches model.forward: [True, True]')"),
            60,
            cpu_twin=(*python, "print('llama count row matches model.forward: [False, True]')"),
        ),
        Step("skipped", (), 0, skip="needs 2 GPUs"),
    ]


def test_the_check_runs_each_step_prints_one_table_and_writes_the_record(monkeypatch, tmp_path, capsys):
    see_gpus(monkeypatch, 1)
    monkeypatch.setattr(torch.cuda.nccl, "version", lambda: (2, 21, 5))
    monkeypatch.setattr(gpu_check, "plan", lambda n, parser, root: tiny_steps())
    out_file = tmp_path / "results" / "gpu_check.json"
    args = argparse.Namespace(dry_run=False, out=str(out_file), checkout=".")
    assert run_check(args, build_parser()) == 1  # a step failed
    printed = capsys.readouterr().out.splitlines()
    table = printed[printed.index(next(line for line in printed if line.startswith("step "))) :]
    expected = {
        "passes": "pass",
        "fails": "FAIL",
        "hangs": "timeout",
        "same on the cpu": "pass",
        "differs from the cpu": "FAIL",
        "skipped": "skip",
    }
    assert [line.split("  ")[0].strip() for line in table[1:-1]] == list(expected)  # one row a step, in order
    assert {name: row[len(name) :].split()[0] for name, row in zip(expected, table[1:-1], strict=True)} == expected
    record = json.loads(out_file.read_text())
    assert set(record) == {"gpus", "versions", "passed", "steps"}
    assert record["gpus"] == ["Test GPU"] and record["passed"] is False
    assert set(record["versions"]) == {
        "python",
        "torch",
        "cuda",
        "nccl",
        "transformers",
        "colossalai",
        "nbval",
        "pp_demo",
    }
    assert record["versions"]["nccl"] == "2.21.5" and record["versions"]["torch"] == torch.__version__
    steps = {s["name"]: s for s in record["steps"]}
    assert set(steps["passes"]) == {
        *("name", "command", "timeout_s", "verdict", "note", "seconds", "output_tail", "first_error", "lines")
    }
    assert steps["fails"]["note"] == "exit 3"
    assert steps["differs from the cpu"]["note"].startswith("verdicts differ from the CPU run")
    assert steps["skipped"] == {**steps["skipped"], "verdict": "skip", "note": "needs 2 GPUs", "seconds": None}
    assert printed[-1] == f"wrote {out_file}"


def test_the_notebooks_run_under_the_makefiles_nbval_flags():
    # one spelling of strict nbval: `make test` and gpu-check run the notebooks alike
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    flags = re.search(r"^NBVAL\s*:=\s*(.+)$", makefile, re.M)[1].split()
    assert tuple(flags) == gpu_check.NBVAL


DOCTOR_WITHOUT_LAB = """\
ok    python: 3.11.9
FAIL  jupyterlab: not installed in this environment (/opt/env): run `make setup`
ok    nbval: 0.11.0
1 check(s) failed: fix them from the top
"""

# What strict nbval prints when cell 5 of a notebook fails: its exception, then the NameErrors of
# every later cell that needed what cell 5 should have defined, then the summary.
NBVAL_OUTPUT = """\
F..FF                                                                    [100%]
=================================== FAILURES ===================================
_______________ notebooks/02_two_stage_pipeline.ipynb::Cell 5 _______________
Notebook cell execution failed
Cell 5: Cell execution caused an exception

Input:
stages = split_model(model, 2)

Traceback:
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[5], line 1
----> 1 stages = split_model(model, 2)
RuntimeError: CUDA error: device-side assert triggered
_______________ notebooks/02_two_stage_pipeline.ipynb::Cell 8 _______________
Notebook cell execution failed
Cell 8: Cell execution caused an exception
NameError: name 'stages' is not defined
_______________ notebooks/02_two_stage_pipeline.ipynb::Cell 9 _______________
Notebook cell execution failed
Cell 9: Cell execution caused an exception
NameError: name 'stages' is not defined
=========================== short test summary info ============================
FAILED notebooks/02_two_stage_pipeline.ipynb::Cell 5
FAILED notebooks/02_two_stage_pipeline.ipynb::Cell 8
FAILED notebooks/02_two_stage_pipeline.ipynb::Cell 9
3 failed, 7 passed in 12.34s
"""


def printing(text, code=0):
    return ("-c", f"import sys; sys.stdout.write({text!r}); sys.exit({code})")


def test_the_doctors_missing_jupyterlab_is_reported_not_failed():
    doctor = Step("doctor", printing(DOCTOR_WITHOUT_LAB, 1), 60, reported=("jupyterlab",))
    outcome = gpu_check.run_step(doctor)
    assert outcome.verdict == "pass"
    assert outcome.note == "reported, not failed: jupyterlab: not installed in this environment"
    assert "/opt/env" not in outcome.note


def test_any_other_fail_of_the_doctor_still_fails_it():
    other = DOCTOR_WITHOUT_LAB.replace("ok    nbval: 0.11.0", "FAIL  nbval: not installed in this environment")
    outcome = gpu_check.run_step(Step("doctor", printing(other, 1), 60, reported=("jupyterlab",)))
    assert (outcome.verdict, outcome.note) == ("FAIL", "exit 1")


def test_the_doctor_step_of_the_plan_reports_jupyterlab():
    assert {s.name: s for s in plan(2, build_parser())}["doctor"].reported == ("jupyterlab",)


def test_a_failed_notebook_keeps_its_first_failing_cell_whole_not_the_nameerrors_after_it():
    outcome = gpu_check.run_step(Step("nbval 02", printing(NBVAL_OUTPUT, 1), 60))
    assert outcome.verdict == "FAIL"
    assert outcome.first_error[0].strip("_ ") == "notebooks/02_two_stage_pipeline.ipynb::Cell 5"
    assert outcome.first_error[-1] == "RuntimeError: CUDA error: device-side assert triggered"
    assert "stages = split_model(model, 2)" in outcome.first_error
    assert not any("NameError" in line for line in outcome.first_error)
    assert outcome.output_tail[-1].startswith("3 failed")  # the tail, as before


def test_a_failed_command_keeps_its_first_traceback_to_its_exception():
    script = "import sys\nprint('working')\ndef f():\n    raise ValueError('the first one')\ntry:\n    f()\nfinally:\n"
    script += "    print('after')\n"
    outcome = gpu_check.run_step(Step("fails", ("-c", script), 60))
    assert outcome.first_error[0] == "Traceback (most recent call last):"
    assert outcome.first_error[-1] == "ValueError: the first one"


def test_a_very_long_first_error_keeps_its_start_and_its_exception():
    frames = "".join(f'  File "x.py", line {i}, in f\n    f()\n' for i in range(500))
    error = gpu_check.first_error(f"Traceback (most recent call last):\n{frames}RecursionError: too deep\nmore\n")
    assert len(error) == gpu_check.FIRST_ERROR_LINES + 1
    assert error[0] == "Traceback (most recent call last):" and error[-1] == "RecursionError: too deep"


def test_the_real_size_and_speed_steps_run_on_cuda_and_keep_their_lines():
    steps = {s.name: s for s in plan(1, build_parser())}
    real, speed = steps["real size, cuda, bf16"], steps["pipeline speed, cuda, bf16"]
    assert real.argv == ("-m", "pp_demo", "real-size", "--device", "cuda", "--size", "real", "--dtype", "bf16")
    assert speed.argv == ("-m", "pp_demo", "pipeline-speed", "--device", "cuda", "--dtype", "bf16")
    assert real.skip is None and speed.skip is None and real.keep_lines and speed.keep_lines
    outcome = gpu_check.run_step(Step("speed", printing("llama: ratio 1.05\nqwen2: ratio 1.10\n"), 60, keep_lines=True))
    assert outcome.lines == ["llama: ratio 1.05", "qwen2: ratio 1.10"] and outcome.verdict == "pass"


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_checkout_that_does_not_exist_is_refused_in_one_line_and_nothing_is_listed(monkeypatch, capsys, dry_run):
    from helpers import cli_error

    see_gpus(monkeypatch, 2)
    line = cli_error(capsys, "gpu-check", "--checkout", "/nonexistent", *dry_run)
    assert line == (
        "python -m pp_demo: error: --checkout /nonexistent: no such folder (the workbook's checkout, where every "
        "step runs)"
    )
