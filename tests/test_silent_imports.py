"""Quiet imports: what a dependency prints at import never reaches stderr, on any machine.

The throwaway module below does at import what bitsandbytes does on a CPU with avx512_bf16
(a ``logging`` WARNING), what ColossalAI does everywhere (a Python warning) and what C code
does (a write to file descriptor 2), so the test needs no special CPU.
"""

import logging
import sys
import warnings

import pytest

from pp_demo.colossalai import forwards as colossalai_forwards
from pp_demo.silent_imports import import_quietly, quiet

# Like many libraries, it logs through a handler of its own, made at import on sys.stderr.
TALKATIVE = """
import logging, os, warnings
logger = logging.getLogger("talkative_probe")
logger.addHandler(logging.StreamHandler())
logger.warning("Failed to load a CPU kernel: no module named 'kernels'")
warnings.warn("an optional CUDA add-on is missing")
os.write(2, b"a C library probed the CPU\\n")
LOADED = True
"""


@pytest.fixture
def talkative(tmp_path, monkeypatch):
    """The name of a fresh module that talks when imported (and is forgotten afterwards)."""
    name = f"talkative_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TALKATIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_the_throwaway_module_does_talk_when_imported_plainly(talkative, capfd):
    # the control: without quiet() all three get out, so the test below can fail
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        __import__(talkative)
    err = capfd.readouterr().err
    assert [str(w.message) for w in caught] == ["an optional CUDA add-on is missing"]
    assert "Failed to load a CPU kernel" in err
    assert "probed the CPU" in err


@pytest.mark.parametrize(
    "importer", [import_quietly, colossalai_forwards._import_quietly], ids=["import_quietly", "colossalai_forwards"]
)
def test_a_quiet_import_prints_nothing_on_stderr(talkative, capfd, importer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importer(talkative)
    assert module.LOADED
    assert capfd.readouterr().err == ""
    assert caught == []


def test_logging_and_warnings_work_again_after_a_quiet_block(caplog):
    level = logging.root.manager.disable
    with quiet():
        logging.getLogger("talkative_probe").error("hidden")
    assert logging.root.manager.disable == level
    logging.getLogger("talkative_probe").error("shown after the block")
    assert [r.getMessage() for r in caplog.records] == ["shown after the block"]
    with pytest.warns(UserWarning, match="shown too"):
        warnings.warn("shown too", stacklevel=1)


def test_a_failed_quiet_import_still_raises():
    with pytest.raises(ModuleNotFoundError):
        import_quietly("no_such_module_for_pp_demo")


def test_a_broken_cuda_driver_means_the_cpu_without_a_warning(monkeypatch):
    import torch

    from pp_demo.verify.compare import default_device

    def is_available():  # what torch does when the driver is too old
        warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old", stacklevel=1)
        return False

    monkeypatch.setattr(torch.cuda, "is_available", is_available)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert default_device() == "cpu"
    assert caught == []
