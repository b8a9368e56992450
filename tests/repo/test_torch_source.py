"""tools/torch_source.py and tools/install_env.py: which torch `make setup` installs, from where.

What is expected comes from the issue's rules: on Linux PyTorch's CPU build (``+cpu``), from pip's
sources or else PyTorch's CPU index, never PyPI's CUDA build in its place; PyPI's build on macOS
and Windows; ``TORCH=cuNNN`` picks PyTorch's CUDA index; with no source, one line naming the fix.
"""

import os
import pathlib
import socket
import subprocess
import sys

import pytest

from tools import install_env, torch_source
from tools.torch_source import NoTorchSource, plan

ROOT = pathlib.Path(__file__).resolve().parents[2]

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


class Asked:
    """A stand-in for a probe that records what it was asked and answers ``answer``."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def __call__(self, *question):
        self.calls.append(question)
        return self.answer


def test_the_lock_pins_one_torch_release_without_a_build_label():
    assert torch_source.locked_torch(ROOT / "constraints" / "pinned.lock.txt") == "2.13.0"


def test_linux_takes_the_cpu_build_from_pip_sources_when_they_have_it_and_probes_nothing_else():
    pip, index = Asked(True), Asked(True)
    chosen = plan("linux", "2.13.0", pip_offers=pip, index_offers=index)
    assert chosen.requirement == "torch==2.13.0+cpu" and chosen.options == []
    assert pip.calls == [("torch==2.13.0+cpu",)] and index.calls == []


def test_linux_falls_back_to_pytorch_cpu_index_asked_once():
    index = Asked(True)
    chosen = plan("linux", "2.13.0", pip_offers=Asked(False), index_offers=index)
    assert chosen.requirement == "torch==2.13.0+cpu"
    assert chosen.options == ["--extra-index-url", CPU_INDEX]
    assert index.calls == [(CPU_INDEX, "torch==2.13.0+cpu")]


def test_linux_with_no_source_fails_in_one_line_naming_the_three_fixes():
    index = Asked(False)
    with pytest.raises(NoTorchSource) as raised:
        plan("linux", "2.13.0", pip_offers=Asked(False), index_offers=index)
    message = str(raised.value)
    assert "\n" not in message and len(index.calls) == 1
    assert all(word in message for word in ("TORCH_INDEX=", "TORCH_FIND_LINKS=", "TORCH=cu128", "torch==2.13.0+cpu"))


def test_a_named_index_or_folder_is_used_as_given_with_the_cpu_label_and_no_probe():
    pip, index = Asked(True), Asked(True)
    chosen = plan("linux", "2.13.0", torch_index="http://mirror/cpu", pip_offers=pip, index_offers=index)
    assert chosen.requirement == "torch==2.13.0+cpu" and chosen.options == ["--extra-index-url", "http://mirror/cpu"]
    chosen = plan("linux", "2.13.0", find_links="/wheels", pip_offers=pip, index_offers=index)
    assert chosen.options == ["--find-links", "/wheels"]
    assert pip.calls == [] and index.calls == []


def test_a_wheelhouse_excludes_every_index():
    chosen = plan("linux", "2.13.0", wheelhouse="/usb/wheelhouse", torch_index="http://mirror/cpu")
    assert chosen.options == ["--no-index", "--find-links", "/usb/wheelhouse"]


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_macos_and_windows_take_pypi_torch_without_a_label(platform):
    pip, index = Asked(False), Asked(False)
    chosen = plan(platform, "2.13.0", pip_offers=pip, index_offers=index)
    assert chosen.requirement == "torch==2.13.0" and chosen.options == []
    assert pip.calls == [] and index.calls == []


@pytest.mark.parametrize("platform", ["linux", "win32"])
def test_the_gpu_switch_picks_pytorch_cuda_index_and_the_cuda_pin(platform):
    chosen = plan(platform, "2.13.0", flavour="cu128", pip_offers=Asked(True), index_offers=Asked(True))
    assert chosen.requirement == "torch==2.13.0+cu128"
    assert chosen.options == ["--extra-index-url", "https://download.pytorch.org/whl/cu128"]


def test_the_gpu_switch_is_refused_on_macos_and_for_a_made_up_build():
    with pytest.raises(NoTorchSource, match="macOS has no CUDA build"):
        plan("darwin", "2.13.0", flavour="cu128")
    with pytest.raises(NoTorchSource, match="TORCH=gpu is not a build"):
        plan("linux", "2.13.0", flavour="gpu")


def test_uv_gets_the_sources_pip_is_configured_with():
    settings = {"index-url": "https://mirror/simple", "extra-index-url": "file:///a/simple file:///b/simple"}
    settings["find-links"] = "/wheels"
    assert torch_source.uv_sources(settings) == [
        "--index-url",
        "https://mirror/simple",
        "--extra-index-url",
        "file:///a/simple",
        "--extra-index-url",
        "file:///b/simple",
        "--find-links",
        "/wheels",
    ]
    assert torch_source.uv_sources({}) == []


def test_pip_configuration_reads_pip_config_list_with_variables_over_files(tmp_path):
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nfind-links = /from/file\nindex-url = https://file/simple\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=str(config), PIP_FIND_LINKS="/from/env")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec env {" ".join(f"{k}={v!r}" for k, v in env.items())} "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    settings = torch_source.pip_configuration(str(python))
    assert settings["find-links"] == "/from/env" and settings["index-url"] == "https://file/simple"


@pytest.mark.parametrize(("version", "refused"), [((3, 10, 14), True), ((3, 11, 7), False), ((3, 13, 0), False)])
def test_setup_refuses_a_python_the_lock_is_not_resolved_for(version, refused):
    problem = install_env.check_python(version)
    assert (problem is not None) == refused
    if refused:
        assert "3.10.14" in problem and "3.11, 3.12 or 3.13" in problem


def _closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_setup_with_no_torch_source_stops_within_a_minute_in_one_line(tmp_path):
    """The real installer, with pip's configuration off and every index on a closed local port."""
    dead = f"http://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=f"{dead}/simple")
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(tmp_path / "venv")]
    command += ["--lock", str(ROOT / "constraints" / "pinned.lock.txt"), "--pytorch-wheels", f"{dead}/whl"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "TORCH_INDEX=" in lines[0] and "TORCH=cu128" in lines[0]
    installed = list((tmp_path / "venv").glob("lib/python*/site-packages/torch"))
    assert installed == []


# ---- the TORCH switch names what PyTorch publishes; a venv of another build is never reused


def _venv_with_torch(folder, version):
    metadata = folder / "lib" / "python3.12" / "site-packages" / f"torch-{version}.dist-info" / "METADATA"
    metadata.parent.mkdir(parents=True)
    metadata.write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    return folder


def test_a_cuda_build_pytorch_does_not_publish_is_named_with_the_ones_it_does():
    with pytest.raises(NoTorchSource) as refused:
        plan("linux", "2.13.0", flavour="cu999")
    assert "TORCH=cu999 is not a build PyTorch publishes for torch 2.13.0" in str(refused.value)
    assert all(build in str(refused.value) for build in torch_source.CUDA_BUILDS)
    # a build published later is taken from the index its user names
    assert plan("linux", "2.13.0", flavour="cu999", torch_index="https://mirror/cu999").requirement.endswith("+cu999")


@pytest.mark.parametrize("build", torch_source.TORCH_BUILDS)
def test_every_published_build_is_planned(build):
    chosen = plan("linux", "2.13.0", flavour=build, pip_offers=Asked(True), index_offers=Asked(True))
    assert chosen.requirement == f"torch==2.13.0+{build}"


def test_a_venv_of_another_torch_build_is_refused_with_the_fix(tmp_path):
    from tools.install_env import build_mismatch, installed_torch_build

    venv = _venv_with_torch(tmp_path / "venv", "2.13.0+cpu")
    assert installed_torch_build(venv) == "cpu"
    assert build_mismatch(venv, "cpu") is None
    problem = build_mismatch(venv, "cu128")
    assert "holds torch built for TORCH=cpu, and TORCH=cu128 asks for another" in problem
    assert "make setup TORCH=cu128" in problem
    assert build_mismatch(tmp_path / "none", "cu128") is None  # no venv yet: it is made for cu128
    mac = _venv_with_torch(tmp_path / "mac", "2.13.0")
    assert build_mismatch(mac, "cpu", platform="darwin") is None  # PyPI's macOS build is the CPU one
    assert "PyPI's build" in build_mismatch(mac, "cpu", platform="linux")


@pytest.mark.parametrize(
    "torch, expected",
    [
        ("cu128", "holds torch built for TORCH=cpu, and TORCH=cu128 asks for another"),
        # a value that is no build is said to be none before deleting the venv is advised: it would not help
        ("cu999", "TORCH=cu999 is not a build PyTorch publishes: use one of cpu, cu"),
        ("gpu", "TORCH=gpu is not a build PyTorch publishes: use one of cpu, cu"),
        ("CPU", "TORCH=CPU is not a build PyTorch publishes (lower case: TORCH=cpu)"),
        ("rocm6.2", "TORCH=rocm6.2 is not a build PyTorch publishes: use one of cpu, cu"),
    ],
)
def test_the_setup_check_refuses_another_build_in_one_line(tmp_path, torch, expected):
    venv = _venv_with_torch(tmp_path / "venv", "2.13.0+cpu")
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(venv), "--torch", torch, "--check-build"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert expected in done.stderr
    if "is not a build" in expected:
        assert "delete" not in done.stderr and "make clean" not in done.stderr


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_lock_that_is_not_a_file_is_refused_before_the_venv_is_made(tmp_path, kind):
    lock = tmp_path / "nonexistent.lock.txt"
    if kind == "folder":
        lock.mkdir()
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(tmp_path / "v"), "--lock", str(lock)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    said = "a folder, not a lock file" if kind == "folder" else "no such file"
    assert (
        done.returncode == 2
        and done.stderr == f"setup: --lock {lock.as_posix()}: {said} (a lock such as constraints/pinned.lock.txt)\n"
    )
    assert not (tmp_path / "v").exists()


def test_a_fresh_setup_with_an_unpublished_build_stops_before_making_anything(tmp_path):
    command = [sys.executable, "-m", "tools.install_env", "--venv", str(tmp_path / "v"), "--torch", "cu999"]
    done = subprocess.run([*command, "--check-build"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "TORCH=cu999 is not a build PyTorch publishes: use one of cpu, cu" in done.stderr
    assert not (tmp_path / "v").exists()


def test_make_setup_checks_the_build_of_an_existing_venv():
    done = subprocess.run(["make", "-n", "setup", "TORCH=cu128"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "-m tools.install_env --venv .venv --torch cu128" in done.stdout and "--check-build" in done.stdout


def test_keep_torch_installs_the_lock_around_the_torch_there_without_its_own_requirements(tmp_path):
    # docs/gpu.md's way for a GPU box: torch 2.11 wants setuptools<82, the lock pins 84.2.1, so
    # the lock goes in without torch and without what torch itself requires (not its extras')
    python = tmp_path / "python"
    python.write_text(
        "#!/bin/sh\n"
        "echo 2.11.0+cu130\n"
        "echo filelock typing-extensions setuptools sympy networkx jinja2 fsspec cuda-toolkit triton\n"
    )
    python.chmod(0o755)
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "# a header\n"
        "setuptools==84.2.1        # via torch\n"
        "pyyaml==6.0.3             # via huggingface-hub\n"
        "torch==2.13.0             # via pp-demo\n"
        "Typing_Extensions==4.15.0 # via torch\n"
        "transformers==4.51.3\n"
    )
    out = tmp_path / "kept.txt"
    assert install_env.keep_torch_lock(python, lock, out) == "2.11.0+cu130"
    assert out.read_text().splitlines() == [
        "# a header",
        "pyyaml==6.0.3             # via huggingface-hub",
        "transformers==4.51.3",
    ]


def test_keep_torch_without_a_torch_stops_in_one_line(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    with pytest.raises(SystemExit, match="has no torch: install the one to keep first"):
        install_env.keep_torch_lock(python, tmp_path / "lock.txt", tmp_path / "kept.txt")


def _script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


def test_keep_torch_in_a_venv_made_by_a_venvs_python_says_why_it_sees_no_torch(tmp_path):
    """``python3 -m venv --system-site-packages`` run by a Python that is itself a venv: the new
    venv sees the packages of the Python under that venv, not the venv's own torch."""
    outer = tmp_path / "box-env"  # the machine's python3, itself a venv holding torch
    (outer / "pyvenv.cfg").parent.mkdir(parents=True)
    (outer / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    venv = tmp_path / "venv"
    (venv / "pyvenv.cfg").parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(
        f"home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.12.3\n"
        f"command = {outer}/bin/python3 -m venv --system-site-packages {venv}\n"
    )
    python = _script(venv / "bin" / "python", "exit 1\n")
    with pytest.raises(SystemExit) as stopped:
        install_env.keep_torch_lock(python, tmp_path / "lock.txt", tmp_path / "kept.txt")
    said = str(stopped.value)
    assert f"was made with --system-site-packages by {outer}/bin/python3, which is itself a venv" in said
    assert f"give --venv {outer.as_posix()} itself" in said and "install the one to keep first" not in said
    assert install_env.unseen_torch(outer) is None  # a venv of its own: nothing to explain


def test_keep_torch_says_how_many_packages_go_into_the_environment_before_installing_any(tmp_path, monkeypatch, capsys):
    venv = tmp_path / "their-env"
    _script(venv / "bin" / "python", "echo 2.12.1+cu128\necho filelock sympy\n")
    lock = tmp_path / "lock.txt"
    lock.write_text("filelock==3.0\npyyaml==6.0.3\ntorch==2.13.0\ntransformers==4.51.3\n# a comment\n")
    events = []

    class Recorder:
        name = "pip"

        def __init__(self, *args):
            pass

        def install(self, arguments, env=None):
            events.append(("install", arguments))

    monkeypatch.setattr(install_env, "Installer", Recorder)
    monkeypatch.setattr(install_env, "say", lambda line: events.append(("say", line)))
    monkeypatch.setattr(torch_source, "pip_configuration", lambda python: {})
    argv = ["--venv", str(venv), "--keep-torch", "--lock", str(lock), "--installer", "pip", "--no-project"]
    assert install_env.main(argv) == 0
    assert events[0] == (
        "say",
        f"{lock.as_posix()} around the torch 2.12.1+cu128 there: 2 packages into {venv.as_posix()}",
    )
    assert [kind for kind, _ in events[1:]] == ["install", "install"]  # pip itself, then the 2 packages
    assert (venv / "keep-torch-0.lock.txt").read_text().split() == [
        "pyyaml==6.0.3",
        "transformers==4.51.3",
        "#",
        "a",
        "comment",
    ]
