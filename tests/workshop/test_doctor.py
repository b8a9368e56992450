"""``python -m pp_demo doctor``: every failure path, simulated, says what is wrong and the fix."""

import importlib.metadata
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest
from helpers import verdicts

from pp_demo.workshop import doctor
from pp_demo.workshop.doctor import FAIL, OK, SKIP, WARN, Check

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _versions(monkeypatch, **found):
    """importlib.metadata.version as if exactly the packages in ``found`` were installed."""

    def version(name):
        if name not in found:
            raise importlib.metadata.PackageNotFoundError(name)
        return found[name]

    monkeypatch.setattr(importlib.metadata, "version", version)


def test_pins_are_read_from_a_long_lock_file_with_comments_markers_and_hashes(tmp_path):
    lock = tmp_path / "pinned.txt"
    lock.write_text(
        "# a comment\n--index-url https://example.org/simple\n"
        "torch==2.13.0 \\\n    --hash=sha256:abc\n"
        "Jinja2==3.1.6 ; python_version >= '3.10'  # templates\n"
        "uvicorn[standard]==0.30.1\nnumpy>=2\n\n"
    )
    assert doctor.read_pins(lock) == {"torch": "2.13.0", "jinja2": "3.1.6", "uvicorn": "0.30.1"}


def test_the_committed_pins_include_every_required_package(repo):
    assert set(doctor.REQUIRED) <= set(doctor.read_pins(repo / doctor.PINS))


def test_the_pins_are_read_from_the_checkout_it_is_given(monkeypatch, tmp_path):
    # an installed pp_demo has no checkout beside it: the pins come from --checkout (default .)
    (tmp_path / "constraints").mkdir()
    # transformers: a torch other than its pin is fine inside the tested range, transformers never
    (tmp_path / "constraints" / "pinned.txt").write_text("transformers==0.0.1\n")
    _versions(monkeypatch, torch="2.13.0", transformers="4.51.3", jupyterlab="4.6.6", nbval="0.11.0")
    monkeypatch.setattr(doctor, "start_ranks", lambda: [])
    monkeypatch.setattr(doctor, "check_ranks", lambda ranks: Check(OK, "two ranks", "stub"))
    monkeypatch.setattr(doctor, "check_kernel", lambda notebooks: Check(OK, "jupyter kernel", "stub"))
    monkeypatch.setattr(doctor, "probe_checks", lambda colossalai: [])
    transformers = [c for c in doctor.run_checks(tmp_path) if c.name == "transformers"][0]
    assert transformers.status == WARN and "pinned 0.0.1" in transformers.detail
    transformers = [c for c in doctor.run_checks(tmp_path / "elsewhere") if c.name == "transformers"][0]
    assert transformers.status == OK  # no pins there: nothing to compare with


def test_an_old_python_fails_and_says_which_to_install():
    check = doctor.check_python((3, 10, 14))
    assert check.status == FAIL and "3.10.14" in check.detail and "3.11, 3.12 or 3.13" in check.detail
    assert doctor.check_python((3, 12, 1)).status == OK
    newer = doctor.check_python((3, 14, 0))
    assert newer.status == WARN and "3.11-3.13" in newer.detail


def test_on_macos_an_old_python3_is_told_where_a_newer_one_comes_from():
    # Apple's command-line tools ship Python 3.9 as python3
    mac = doctor.check_python((3, 9, 6), platform="darwin")
    assert mac.status == FAIL and "brew install python@3.12" in mac.detail
    assert "make setup PYTHON=python3.12" in mac.detail and "python.org" in mac.detail
    assert "brew" not in doctor.check_python((3, 9, 6), platform="linux").detail


def test_a_missing_package_fails_with_the_setup_command(monkeypatch):
    _versions(monkeypatch)
    check = doctor.check_package("torch", {"torch": "2.13.0"})
    assert check.status == FAIL and "not installed" in check.detail and "make setup" in check.detail


def test_another_transformers_is_a_warning_that_names_the_stored_outputs(monkeypatch):
    _versions(monkeypatch, transformers="5.24.0")
    check = doctor.check_package("transformers", {"transformers": "4.51.3"})
    assert check.status == WARN and "pinned 4.51.3" in check.detail and "stored outputs" in check.detail


def test_the_pinned_release_is_ok_whichever_build_it_is(monkeypatch):
    # the build (CPU, CUDA, MPS) is judged against the machine by the torch build check
    for build in ("2.13.0+cpu", "2.13.0+cu128", "2.13.0"):
        _versions(monkeypatch, torch=build)
        assert doctor.check_package("torch", {"torch": "2.13.0"}) == Check(OK, "torch", build)


def test_a_missing_colossalai_is_only_a_warning(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    check = doctor.check_colossalai()
    assert check.status == WARN and "notebook 06" in check.detail and "make colossalai" in check.detail


def test_on_windows_a_missing_colossalai_is_not_sent_to_an_install_that_cannot_work(monkeypatch):
    monkeypatch.setattr(doctor.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(doctor.sys, "platform", "win32")
    check = doctor.check_colossalai()
    assert check.status == WARN and "make colossalai" not in check.detail and "WSL" in check.detail


def test_deepspeed_is_said_found_or_missing_as_colossalai_is(monkeypatch, tmp_path):
    import pp_demo.deepspeed

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(pp_demo.deepspeed.sys, "prefix", str(tmp_path))  # nothing beside this "venv"
    check = doctor.check_deepspeed()
    assert check.status == WARN and "notebook 11" in check.detail and "make deepspeed" in check.detail
    monkeypatch.setattr(doctor.sys, "platform", "win32")
    check = doctor.check_deepspeed()
    assert check.status == WARN and "make deepspeed" not in check.detail and "WSL" in check.detail


def test_an_unwritable_temp_dir_fails_and_says_to_set_tmpdir(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    check = doctor.check_temp_dir()
    assert check.status == FAIL and "TMPDIR" in check.detail


def test_the_kernel_make_lab_uses_imports_this_pp_demo():
    assert doctor.check_kernel().status == OK


def test_a_kernel_without_pp_demo_fails(monkeypatch):
    # -I -S: no PYTHONPATH and no site-packages, as in a kernel of another Python
    monkeypatch.setattr(doctor, "kernel_python", lambda: [sys.executable, "-I", "-S"])
    check = doctor.check_kernel()
    assert check.status == FAIL and "cannot import pp_demo" in check.detail


def test_a_kernel_with_another_pp_demo_is_a_warning(monkeypatch, tmp_path):
    (tmp_path / "pp_demo").mkdir()
    (tmp_path / "pp_demo" / "__init__.py").write_text("")
    monkeypatch.setattr(doctor, "kernel_python", lambda: ["env", f"PYTHONPATH={tmp_path}", sys.executable])
    check = doctor.check_kernel()
    assert check.status == WARN and "another pp_demo" in check.detail


def test_no_kernel_spec_fails(monkeypatch):
    def no_kernel():
        raise LookupError("No such kernel named python3")

    monkeypatch.setattr(doctor, "kernel_python", no_kernel)
    check = doctor.check_kernel()
    assert check.status == FAIL and "no python3 kernel" in check.detail


def test_two_ranks_exchange_a_tensor_on_this_machine():
    assert doctor.check_ranks(doctor.start_ranks()).status == OK


def test_ranks_that_hang_are_stopped_and_reported(monkeypatch):
    monkeypatch.setattr(doctor, "RANK", "import time; time.sleep(60)")
    monkeypatch.setattr(doctor, "RANKS_TIMEOUT_S", 1)
    ranks = doctor.start_ranks()
    check = doctor.check_ranks(ranks)
    assert check.status == FAIL and "no exchange within 1 s" in check.detail
    assert all(rank.poll() is not None for rank in ranks)  # stopped, not left running


def test_ranks_that_fail_report_their_last_line(monkeypatch):
    monkeypatch.setattr(doctor, "RANK", "import sys; sys.exit('Connection refused by 127.0.0.1')")
    check = doctor.check_ranks(doctor.start_ranks())
    assert check.status == FAIL and "Connection refused by 127.0.0.1" in check.detail


def test_an_import_that_prints_on_stderr_fails_the_quiet_imports(monkeypatch, tmp_path):
    (tmp_path / "talks_at_import.py").write_text("import logging\nlogging.warning('probe failed')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(doctor, "NOTEBOOK_MODULES", ("talks_at_import",))
    imports, repro = doctor.probe_checks(colossalai=False)
    assert imports.status == FAIL and "probe failed" in imports.detail and "nbval" in imports.detail
    assert repro.status == OK, repro  # it ran the real reproduction in a child process


def test_the_reproduction_check_says_it_ran_as_it_should_and_names_no_verdict():
    """The doctor is set-up homework: it runs the reproduction but never tells which rule goes
    wrong (notebook 01 lets attendees find that), only that it ran and compared as it should."""
    imports, repro = doctor.probe_checks(colossalai=False)  # the real reproduction, in a child
    assert imports.status == OK and repro.status == OK
    assert repro.line() == (
        "ok    reproduction: a two-stage pipeline and model.forward ran on a padded batch,"
        " and compared as the notebooks' stored outputs do"
    )
    assert verdicts(imports.line() + "\n" + repro.line()) == []


@pytest.mark.parametrize(
    "line", ["row matches model.forward: [True, True]", "row matches model.forward: [False, False]"]
)
def test_a_reproduction_that_compares_otherwise_fails_and_names_no_verdict_either(monkeypatch, line):
    monkeypatch.setattr(doctor, "run_probe", lambda colossalai: {"error": None, "stderr": "", "line": line})
    _, repro = doctor.probe_checks(colossalai=False)
    assert repro.status == FAIL and verdicts(repro.line()) == [], repro.line()


def test_a_failing_import_fails_and_skips_the_reproduction(monkeypatch):
    monkeypatch.setattr(doctor, "NOTEBOOK_MODULES", ("no_such_module_for_pp_demo",))
    imports, repro = doctor.probe_checks(colossalai=False)
    assert imports.status == FAIL and "no_such_module_for_pp_demo" in imports.detail
    assert repro.status == SKIP


def test_another_reproduction_line_fails_and_names_the_fix(monkeypatch):
    line = "row matches model.forward: [True, True]"
    monkeypatch.setattr(doctor, "run_probe", lambda colossalai: {"error": None, "stderr": "", "line": line})
    imports, repro = doctor.probe_checks(colossalai=False)
    assert imports.status == OK and repro.status == FAIL and "against the pins" in repro.detail


def test_without_torch_the_torch_checks_are_skipped_and_nothing_starts(monkeypatch, capsys):
    _versions(monkeypatch, transformers="4.51.3", jupyterlab="4.6.6", nbval="0.11.0")
    monkeypatch.setattr(doctor, "start_ranks", lambda: pytest.fail("ranks started without torch"))
    monkeypatch.setattr(doctor, "run_probe", lambda colossalai: pytest.fail("probe ran without torch"))
    assert doctor.main([]) == 1
    out = capsys.readouterr().out
    assert "FAIL  torch: not installed" in out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("skip")] == [
        "skip  two ranks (gloo, 127.0.0.1)",
        "skip  quiet imports",
        "skip  reproduction",
    ]


def test_the_exit_status_is_1_on_any_fail_and_0_otherwise(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "run_checks", lambda checkout: [Check(OK, "a", "fine"), Check(WARN, "b", "works")])
    assert doctor.main([]) == 0
    monkeypatch.setattr(doctor, "run_checks", lambda checkout: [Check(OK, "a", "fine"), Check(FAIL, "b", "do X")])
    assert doctor.main([]) == 1
    assert capsys.readouterr().out.splitlines()[-2:] == ["FAIL  b: do X", "1 check(s) failed: fix them from the top"]


def test_python_m_pp_demo_doctor_runs_on_an_interpreter_without_torch():
    # -S: no site-packages, so neither torch nor anything else installed is importable
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-S", "-m", "pp_demo", "doctor"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok    python:")
    assert any(line.startswith("FAIL  torch: not installed") for line in lines)
    assert "skip  reproduction: needs torch" in lines


def test_the_doctor_imports_on_the_old_python_it_is_run_with_to_say_so():
    # `make doctor` before `make setup` runs on the machine's python3, 3.9 on a Mac: the modules it
    # imports must parse as 3.9 and evaluate no `X | None` annotation at import (3.10 syntax)
    import ast
    import pathlib

    package = pathlib.Path(doctor.__file__).resolve().parents[1]
    for module in (
        "__init__.py",
        "__main__.py",
        "workshop/__init__.py",
        "workshop/doctor.py",
        "workshop/platform_checks.py",
    ):
        source = (package / module).read_text(encoding="utf-8")
        tree = ast.parse(source, feature_version=(3, 9))
        if "from __future__ import annotations" in source:
            continue
        annotations = [n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation]
        annotations += [n.returns for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.returns]
        unions = [
            a for a in annotations for n in ast.walk(a) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr)
        ]
        assert unions == [], f"pp_demo/{module}: a 3.10 union annotation, evaluated at import"


# ---- a checkout that is none, and a Python too old to parse the package


def test_a_checkout_that_is_none_is_a_fail_or_a_warning_with_the_fix(tmp_path, repo):
    (tmp_path / "a_file").write_text("x\n")
    (tmp_path / "empty").mkdir()
    for path, status, said in [
        (tmp_path / "missing", FAIL, "does not exist"),
        (tmp_path / "a_file", FAIL, "is a file, not a folder"),
        (tmp_path / "empty", WARN, "holds no constraints/pinned.txt nor notebooks/"),
    ]:
        check = doctor.check_checkout(path)
        assert check.status == status and said in check.detail and "--checkout PATH" in check.detail
    assert doctor.check_checkout(repo).status == OK


def test_the_doctor_command_fails_on_a_missing_checkout(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(doctor, "run_checks", lambda checkout: [doctor.check_checkout(checkout)])
    assert doctor.main(["--checkout", str(tmp_path / "missing")]) == 1
    assert "all set" not in capsys.readouterr().out


SHIMS = ["pp_demo/__init__.py", "pp_demo/__main__.py", "tools/__init__.py"]


@pytest.mark.parametrize("path", SHIMS)
def test_the_entry_points_parse_without_the_syntax_of_newer_pythons(path):
    """What ``python -m pp_demo`` and ``python -m tools.install_env`` parse before their version
    check: no f-strings, annotations, walrus or async (3.4's grammar), nor a print statement's
    keyword arguments, which Python 2.7 reads as a syntax error."""
    import ast

    source = (ROOT / path).read_text()
    tree = ast.parse(source, feature_version=(3, 4))
    for node in ast.walk(tree):
        assert not isinstance(node, ast.JoinedStr | ast.AnnAssign), (path, node.lineno)
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None and all(a.annotation is None for a in node.args.args), path
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            assert not node.keywords, (path, node.lineno)


def _old_pythons():
    """Candidate Pythons on this machine (PATH, or pyenv's versions); none is fine."""
    import glob
    import shutil

    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = [shutil.which(f"python{v}") for v in ("2.7", "3.8", "3.9", "3.10")]
    found += sorted(glob.glob(os.path.join(root, "versions", "[23].*", "bin", "python")))
    return [p for p in dict.fromkeys(found) if p]  # the test skips those of 3.11 and later


@pytest.mark.parametrize(
    "entry, expected",
    [
        (["-m", "pp_demo", "doctor"], "FAIL  python: {} is too old for pp_demo: install Python 3.11, 3.12 or 3.13"),
        (["-m", "tools.install_env", "--lock", "x"], "setup: Python {} is not one the lock is resolved for"),
    ],
)
def test_an_old_python_is_told_in_one_line_which_to_use(entry, expected):
    pythons = _old_pythons()
    if not pythons:
        pytest.skip("no Python older than 3.11 here (the syntax test above still holds)")
    for python in pythons:
        version = subprocess.run(
            [python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        if not version or tuple(map(int, version.split(".")[:2])) >= (3, 11):
            continue
        done = subprocess.run([python, *entry], cwd=ROOT, capture_output=True, text=True, timeout=30)
        lines = (done.stdout + done.stderr).strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, (python, lines)
        assert lines[0].startswith(expected.format(version)), lines


@pytest.mark.parametrize("platform, said", [("darwin", "brew install python@3.12"), ("linux", "make doctor PYTHON=")])
def test_on_an_old_python_a_mac_is_told_where_a_newer_one_comes_from(platform, said):
    # the entry point's own check, on this interpreter made to look like a Mac's python3 (3.9)
    code = (
        f"import runpy, sys; sys.version_info = (3, 9, 18, 'final', 0); sys.platform = {platform!r}; "
        "sys.argv = ['pp_demo', 'doctor']; runpy.run_module('pp_demo', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and said in lines[0], (done.stdout, done.stderr)
    assert ("brew" in lines[0]) == (platform == "darwin")


@pytest.mark.parametrize("found", ["2.11.0+cu130", "2.12.1", "2.15.0"])
def test_another_torch_within_the_tested_range_is_ok_and_says_the_range(monkeypatch, found):
    # a GPU box's own torch: CI runs two-rank training on 2.11 and 2.15, the lock's 2.13 between
    _versions(monkeypatch, torch=found)
    check = doctor.check_package("torch", {"torch": "2.13.0"})
    assert check.status == OK and found in check.detail and "tested range 2.11-2.15" in check.detail


@pytest.mark.parametrize("found", ["2.5.1", "2.10.0+cu128", "2.16.0", "3.0.0"])
def test_a_torch_outside_the_tested_range_is_a_warning_with_the_fix(monkeypatch, found):
    _versions(monkeypatch, torch=found)
    check = doctor.check_package("torch", {"torch": "2.13.0"})
    assert check.status == WARN and "outside the tested range 2.11-2.15" in check.detail
    assert "make setup" in check.detail
