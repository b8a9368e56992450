"""Whether DeepSpeed is there: the answer every DeepSpeed test, job and the doctor go by. It runs
where DeepSpeed is missing too (no skip): that is where a wrong "found" sends ranks to fail."""

import importlib
import sys

from pp_demo.deepspeed import NOT_INSTALLED, missing


def _python_that_looks_only_in(monkeypatch, path, prefix):
    """Imports search ``path`` alone, and the venv (where `make deepspeed` puts its folder) is ``prefix``."""
    monkeypatch.setattr(sys, "path", [str(path)])
    monkeypatch.setattr(sys, "prefix", str(prefix))
    monkeypatch.delitem(sys.modules, "deepspeed", raising=False)
    importlib.invalidate_caches()


def test_a_folder_named_deepspeed_without_a_package_is_not_deepspeed(tmp_path, monkeypatch):
    # this checkout's own tests/deepspeed is such a folder, on pytest's path
    (tmp_path / "deepspeed").mkdir()
    _python_that_looks_only_in(monkeypatch, tmp_path, tmp_path / "venv")  # no `make deepspeed` folder there
    assert missing() == NOT_INSTALLED


def test_a_package_named_deepspeed_is_found(tmp_path, monkeypatch):
    (tmp_path / "deepspeed").mkdir()
    (tmp_path / "deepspeed" / "__init__.py").write_text("")
    _python_that_looks_only_in(monkeypatch, tmp_path, tmp_path / "venv")
    assert missing() is None


def test_make_deepspeed_s_folder_beside_the_venv_is_found(tmp_path, monkeypatch):
    (tmp_path / "venv" / "deepspeed" / "deepspeed").mkdir(parents=True)
    (tmp_path / "venv" / "deepspeed" / "deepspeed" / "__init__.py").write_text("")
    _python_that_looks_only_in(monkeypatch, tmp_path / "elsewhere", tmp_path / "venv")
    assert missing() is None
