"""The doctor in the rooms a new user brings: torchrun's variables left in the shell, a read-only
checkout, a home folder that takes no files, a broken kernel spec on JUPYTER_PATH, gloo's extra
lines, a torch kept by --keep-torch. Each is named with the fix that works (never `make setup`
where it does not)."""

import os
import pathlib
import sys

import pytest

from pp_demo.errors import BadInput
from pp_demo.ranks.torchrun_env import check_torchrun_env
from pp_demo.workshop import doctor, platform_checks
from pp_demo.workshop.doctor import FAIL, OK, WARN, Check


def test_torchruns_variables_left_in_the_shell_are_a_warning_with_reproduces_own_line(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(BadInput) as refused:  # what reproduce says in this shell
        check_torchrun_env()
    status, name, detail = platform_checks.torchrun_env_check()
    assert (status, name) == (WARN, "torchrun variables")
    assert str(refused.value) in detail and detail.endswith("`unset RANK WORLD_SIZE` outside torchrun")
    assert os.environ["RANK"] == "0" and os.environ["WORLD_SIZE"] == "2"  # the shell's own, untouched
    assert platform_checks.torchrun_env_check({"PATH": "/bin"})[0] == OK


def test_a_read_only_checkout_is_a_warning_that_says_notebooks_cannot_be_saved(tmp_path, monkeypatch):
    assert platform_checks.writable_check(tmp_path)[0] == OK and list(tmp_path.iterdir()) == []

    def read_only(*args, **kwargs):  # as a read-only mount answers (root ignores file modes)
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(platform_checks.tempfile, "NamedTemporaryFile", read_only)
    status, _, detail = platform_checks.writable_check(tmp_path)
    assert status == WARN and "Read-only file system" in detail and "cannot save a notebook" in detail


def test_a_home_that_takes_no_files_names_home_not_make_setup(monkeypatch):
    status, _, detail = platform_checks.home_check("/proc")
    assert status == FAIL and detail.startswith("HOME=/proc cannot be written") and "make setup" not in detail
    monkeypatch.setenv("HOME", "/proc")
    monkeypatch.delenv("IPYTHONDIR", raising=False)
    monkeypatch.delenv("JUPYTER_PATH", raising=False)
    kernel = doctor.check_kernel()  # Jupyter looks for IPython's folder under that home
    assert kernel.status == FAIL and kernel.detail.endswith(platform_checks.HOME_FIX), kernel.detail
    assert "make setup" not in kernel.detail


def test_a_broken_kernel_spec_on_jupyter_path_is_named_with_its_folder(tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / "python3" / "kernel.json"
    spec.parent.mkdir(parents=True)
    spec.write_text('{"argv": [', encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    kernel = doctor.check_kernel()
    assert kernel.status == FAIL and f"its spec, {spec.parent}/kernel.json, is broken" in kernel.detail
    assert "make setup" not in kernel.detail


class _Rank:
    """A finished rank: its output, as torch 2.10's gloo leaves it."""

    def __init__(self, out):
        self.out, self.returncode = out, 0

    def communicate(self, timeout=None):
        return self.out, ""


def test_the_rank_check_takes_glooss_extra_connected_lines():
    connected = "Rank 1 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1\n"
    ranks = [_Rank("[0.0, 1.0, 2.0, 3.0]\n"), _Rank(connected + "[0.0, 1.0, 2.0, 3.0]\n")]
    assert doctor.check_ranks(ranks).status == OK
    assert doctor.check_ranks([_Rank(""), _Rank(connected + "[0.0, 0.0, 0.0, 0.0]\n")]).status == FAIL


def test_a_kept_torchs_build_warning_never_says_to_replace_it(tmp_path):
    gpu, cpu_build = "GPU 0: Test GPU", "2.12.1+cpu"
    for kept, fix in ((False, platform_checks.GPU_FIX), (True, platform_checks.KEPT_FIX)):
        status, _, detail = platform_checks.torch_build_check(cpu_build, [], gpu, system="linux", kept=kept)
        assert status == WARN and fix in detail
    _, _, detail = platform_checks.torch_build_check("2.12.1+cu128", [], None, system="linux", kept=True)
    assert "rm -rf" not in detail and "make setup" not in detail and platform_checks.KEPT_FIX in detail
    env = tmp_path / "venv"
    site = env / "lib" / "site-packages"
    site.mkdir(parents=True)
    assert not platform_checks.torch_kept(site, env)  # installed by make setup
    assert platform_checks.torch_kept(tmp_path / "machine" / "site-packages", env)  # the machine's own
    (env / "keep-torch-0.lock.txt").write_text("")
    assert platform_checks.torch_kept(site, env)  # --keep-torch named the environment itself


def test_all_set_with_warnings_points_at_them(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "run_checks", lambda checkout: [Check(OK, "a", "x"), Check(WARN, "b", "y")])
    assert doctor.main([]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "all set for the workshop",
        "(read the 1 WARN line(s) above: each says what it affects)",
    ]


def test_the_doctors_import_probe_reads_the_environments_own_font_cache(monkeypatch):
    seen = {}

    def run(argv, **kwargs):
        seen.update(kwargs["env"])
        raise doctor.subprocess.TimeoutExpired(argv, 1)

    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setattr(doctor.subprocess, "run", run)
    with pytest.raises(doctor.subprocess.TimeoutExpired):
        doctor.run_probe(False)
    assert seen["MPLCONFIGDIR"] == os.path.join(sys.prefix, "share", "pp_demo", "matplotlib")
    assert pathlib.Path(seen["MPLCONFIGDIR"]).is_dir()
