"""Shared test set-up: the repository's paths, the notebooks, the markers by folder, a headless
matplotlib, and the fixtures several folders use.

Markers (declared in pyproject.toml) say what a test needs, so a leg of CI picks tests by need
rather than by a list of files: ``-m "not colossalai and not slow and not same_on_every_stack"``
on transformers 5.x, where ColossalAI 0.5.0 cannot be installed. Every test under
``tests/colossalai/`` needs ColossalAI, so the folder marks them. ``same_on_every_stack``: a test
whose outcome cannot depend on the torch or transformers version, run by `make test` and left out
by the extra legs (transformers 5.x, the torch range); every test under ``tests/repo/`` (the
repository's own files: docs, locks, Makefile, stored notebooks, tools) has it from its folder.
Other markers are set in the test files themselves.

The repository's root is on the path (pyproject: ``pythonpath = ["."]``), so tests import the
tools as a package (``from tools import episodes``), with no ``sys.path`` of their own.

matplotlib reads its config and font cache from this environment's own folder (``MPLCONFIGDIR``,
as ``make lab`` does: ``pp_demo.workshop.platform_checks.private_mplconfig``), set before it is imported and
inherited by the notebooks' kernels: a per-user ``~/.cache/matplotlib`` that other work on the
machine rewrote without matplotlib's own fonts would fill a notebook's stderr with findfont
warnings, and strict nbval would fail.
"""

import os
import pathlib

import pytest

from pp_demo.workshop.platform_checks import private_mplconfig

if "MPLCONFIGDIR" not in os.environ and (_MPLCONFIG := private_mplconfig()):
    os.environ["MPLCONFIGDIR"] = _MPLCONFIG

import matplotlib  # noqa: E402  (after MPLCONFIGDIR: matplotlib reads it on import)

matplotlib.use("Agg")  # before any test imports pyplot: no display here, nor in CI

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9]*.ipynb"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parents = pathlib.Path(item.fspath).parents
        if (REPO / "tests" / "colossalai") in parents:
            item.add_marker(pytest.mark.colossalai)
        if (REPO / "tests" / "repo") in parents:
            item.add_marker(pytest.mark.same_on_every_stack)


@pytest.fixture
def repo() -> pathlib.Path:
    """The checkout's root: the tests that check the repository itself read files under it."""
    return REPO


@pytest.fixture
def notebooks() -> list[pathlib.Path]:
    """The workbook's notebooks, ``notebooks/[0-9]*.ipynb``, in their order."""
    return NOTEBOOKS


@pytest.fixture(params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def notebook_path(request: pytest.FixtureRequest) -> pathlib.Path:
    """Each notebook in turn: a test asking for it runs once per notebook."""
    path: pathlib.Path = request.param
    return path
