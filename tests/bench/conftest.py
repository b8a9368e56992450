"""What the tests of the results page's findings share: the page, and a committed results file by name."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results_page() -> str:
    """docs/results.md, whose tables and numbers the tests here read against the files they come from."""
    return (REPO / "docs" / "results.md").read_text()


@pytest.fixture(scope="module")
def committed() -> Callable[[str], dict]:
    """``committed(name)``: ``results/<name>``, the committed record a section of the page is written from."""
    return lambda name: json.loads((REPO / "results" / name).read_text())
