"""The recipe tests' copy of the checkout (recipe_tree.py says what it is)."""

from pathlib import Path

import pytest
from recipe_tree import copy_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the checkout's files under git, so the recipe's edits show as changes."""
    return copy_tree(tmp_path)
