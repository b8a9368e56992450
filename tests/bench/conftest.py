"""What the tests of the results page's findings share: the page, and a committed results file by name."""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results_page() -> str:
    """docs/results.md, whose tables and numbers the tests here read against the files they come from."""
    return (REPO / "docs" / "results.md").read_text()


def committed(name: str) -> dict:
    """``results/<name>``, the committed record a section of the page is written from."""
    record: dict = json.loads((REPO / "results" / name).read_text())
    return record
