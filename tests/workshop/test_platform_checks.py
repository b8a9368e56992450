"""pp_demo.workshop.platform_checks, simulated: doctor's platform and torch-build lines on every kind of machine.

Expected values come from the supported list (docs/install.md: Linux x86_64/aarch64 with glibc
2.28+, macOS 14+ on Apple silicon, Windows x86_64) and from how PyTorch labels its builds.
"""

import importlib.metadata
import shutil
import subprocess

import pytest

from pp_demo.workshop import doctor, platform_checks
from pp_demo.workshop.platform_checks import FAIL, OK, WARN

CUDA_RUNTIME = 'nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"'
GPU = "GPU 0: NVIDIA H200"


@pytest.mark.parametrize(
    ("system", "arch", "mac", "libc"),
    [
        ("linux", "x86_64", "", ("glibc", "2.36")),
        ("linux", "aarch64", "", ("glibc", "2.28")),
        ("darwin", "arm64", "14.5", ("", "")),
        ("win32", "AMD64", "", ("", "")),
    ],
)
def test_the_supported_platforms_are_ok(system, arch, mac, libc):
    status, name, detail = platform_checks.platform_support(system, arch, mac, libc)
    assert (status, name) == (OK, "platform") and "supported" in detail


@pytest.mark.parametrize(
    ("system", "arch", "mac", "libc", "why"),
    [
        ("linux", "x86_64", "", ("glibc", "2.17"), "glibc 2.28"),
        ("darwin", "arm64", "13.6", ("", ""), "macOS 14"),
        ("darwin", "x86_64", "14.1", ("", ""), "ColossalAI is unavailable"),
        ("win32", "ARM64", "", ("", ""), "not supported"),
    ],
)
def test_an_unsupported_platform_fails_and_points_at_the_read_only_site(system, arch, mac, libc, why):
    status, _, detail = platform_checks.platform_support(system, arch, mac, libc)
    assert status == FAIL and why in detail and "make site" in detail


def test_intel_macos_says_torch_has_no_wheel_there():
    _, _, detail = platform_checks.platform_support("darwin", "x86_64", "14.1", ("", ""))
    assert "Intel macOS is not supported" in detail and "torch 2.13 has no wheel" in detail


@pytest.mark.parametrize(
    ("version", "requires", "system", "build"),
    [
        ("2.13.0+cpu", [], "linux", "CPU"),
        ("2.13.0+cu128", [], "linux", "CUDA 12.8"),
        ("2.13.0+cu126", [], "win32", "CUDA 12.6"),
        ("2.13.0", [CUDA_RUNTIME], "linux", "CUDA 12.8"),  # PyPI's Linux wheel
        ("2.13.0", ['nvidia-cuda-runtime-cu12==12.8.90; extra == "cuda"'], "linux", "CPU"),
        ("2.13.0", [], "win32", "CPU"),
        ("2.13.0", [], "darwin", "MPS (and CPU)"),
    ],
)
def test_the_torch_build_is_read_from_its_label_or_its_requirements(version, requires, system, build):
    assert platform_checks.torch_build(version, requires, system) == build


def test_a_visible_gpu_with_the_cpu_build_warns_with_the_command_that_fixes_it():
    status, name, detail = platform_checks.torch_build_check("2.13.0+cpu", [], GPU, "linux")
    assert (status, name) == (WARN, "torch build") and "CPU build" in detail and GPU in detail
    assert "make setup TORCH=cu128" in detail


def test_the_cuda_build_with_its_gpu_is_ok_and_without_one_warns():
    assert platform_checks.torch_build_check("2.13.0+cu128", [], GPU, "linux") == (
        OK,
        "torch build",
        f"2.13.0+cu128, CUDA 12.8 build, {GPU}",
    )
    status, _, detail = platform_checks.torch_build_check("2.13.0", [CUDA_RUNTIME], None, "linux")
    assert status == WARN and "no GPU is visible" in detail and "make setup" in detail


def test_the_cpu_build_without_a_gpu_is_ok():
    assert platform_checks.torch_build_check("2.13.0+cpu", [], None, "linux")[0] == OK


def test_macos_warns_that_the_workbook_runs_on_the_cpu():
    status, _, detail = platform_checks.torch_build_check("2.13.0", [], None, "darwin")
    assert status == WARN and "runs on the CPU on macOS" in detail and "MPS" in detail


def test_the_gpu_is_read_from_nvidia_smi(monkeypatch):
    listing = "GPU 0: NVIDIA H200 (UUID: GPU-0a1b)\nGPU 1: NVIDIA H200 (UUID: GPU-2c3d)\n"
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, listing, ""))
    assert platform_checks.visible_gpu() == GPU
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert platform_checks.visible_gpu() is None


def test_doctor_shows_the_gpu_warning_for_a_gpu_box_with_the_cpu_build(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.13.0+cpu")
    monkeypatch.setattr(importlib.metadata, "requires", lambda name: [])
    monkeypatch.setattr(platform_checks, "visible_gpu", lambda: GPU)
    monkeypatch.setattr(platform_checks.sys, "platform", "linux")
    assert doctor.check_torch_build().line().startswith("WARN  torch build: 2.13.0+cpu, CPU build, but a GPU")
