"""docs/install.md says what the code does: the set-up email, the no-source error, the variables."""

import pathlib
import re

import pytest

from tools import facilitator, torch_source

ROOT = pathlib.Path(__file__).resolve().parents[2]

DOC = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")


def _makefile_text():
    return (ROOT / "Makefile").read_text() + (ROOT / "packaging.mk").read_text()


def test_the_install_page_opens_with_the_facilitator_guide_s_set_up_email():
    for line in facilitator.SETUP_EMAIL:
        assert line in DOC, f"docs/install.md lacks the set-up line {line!r}"


def test_the_install_page_shows_the_one_line_setup_prints_with_no_torch_source():
    with pytest.raises(torch_source.NoTorchSource) as raised:
        torch_source.plan("linux", "2.13.0")
    assert f"setup: {raised.value}" in DOC


def test_every_make_variable_the_page_lists_is_one_the_makefile_reads():
    listed = re.findall(r"^\| `([A-Z_]+)=", DOC, flags=re.M)
    assert {"TORCH_INDEX", "TORCH_FIND_LINKS", "WHEELHOUSE", "TORCH", "INSTALLER"} <= set(listed)
    makefile = _makefile_text()
    assert [v for v in listed if f"$({v})" not in makefile] == []


def test_the_gpu_warning_shown_on_the_page_is_the_one_doctor_prints():
    from pp_demo.workshop.platform_checks import torch_build_check

    status, name, detail = torch_build_check("2.13.0+cpu", [], "GPU 0: NVIDIA H200", "linux")
    assert f"{status}  {name}: {detail}" in DOC
