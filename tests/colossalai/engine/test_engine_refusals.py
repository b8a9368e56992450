"""``colossalai-engine`` refuses, before any rank starts, what cannot run here.

fp16 training needs a GPU (ColossalAI 0.5.0's grad scaler asks the accelerator for its devices), and
``--tree installed`` needs ColossalAI installed: each is one ``error:`` line, exit 2, saying what to do.
Neither needs ColossalAI: whether it is importable, and whether there is a GPU, are stood in for.
"""

import pytest
import torch

from pp_demo.cli import main
from pp_demo.instruments.engine import cli as engine_cli
from pp_demo.instruments.engine import run as engine_run


@pytest.fixture
def no_ranks(monkeypatch):
    """Fails the test if a rank would start: a refusal comes first."""

    def started(*args, **kwargs):
        raise AssertionError("ranks started")

    monkeypatch.setattr(engine_cli, "run_engine", started)
    monkeypatch.setattr(engine_run, "run_engine", started)


def _engine(capsys, *args):
    with pytest.raises(SystemExit) as exit_:
        main(["colossalai-engine", "--family", "llama", *args])
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


def test_fp16_training_on_a_cpu_is_refused_with_what_to_use_instead(capsys, monkeypatch, no_ranks):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code, out, err = _engine(capsys, "--dtype", "fp16", "--mode", "training")
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and line.startswith("python -m pp_demo: error: --dtype fp16 --mode training needs a GPU")
    assert "--dtype bf16" in line and "Traceback" not in err


def test_fp16_by_default_modes_includes_training_and_is_refused_too(capsys, monkeypatch, no_ranks):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code, _, err = _engine(capsys, "--dtype", "fp16")
    assert code == 2 and "needs a GPU" in err


def test_the_installed_tree_without_colossalai_says_make_colossalai(capsys, monkeypatch, no_ranks):
    monkeypatch.setattr(engine_cli, "installed", lambda name: False)
    code, out, err = _engine(capsys, "--tree", "installed", "--mode", "inference")
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and line.startswith(
        "python -m pp_demo: error: --tree installed: ColossalAI is not installed"
    )
    assert "make colossalai" in line


def test_what_can_run_is_not_refused(monkeypatch):
    """fp16 inference on a CPU, and the installed tree where ColossalAI is: past the checks."""
    import argparse

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(engine_cli, "installed", lambda name: True)
    args = argparse.Namespace(
        case_timeout=60.0, backend="gloo", tree=["installed"], dtype="fp16", mode=["inference"], out=None
    )
    engine_cli._check_before_the_run(args)  # raises nothing
    args.dtype, args.mode = "bf16", ["inference", "training"]
    engine_cli._check_before_the_run(args)
