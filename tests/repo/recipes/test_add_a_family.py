"""docs/architecture.md's recipe "Add a family", followed in a copy of the tree."""

import pytest
from recipe_tree import check_against_page, edit, run_pytest

# each recipe runs every notebook in its copy: over a minute on 2 cores
pytestmark = pytest.mark.slow


PHI3 = """
    Family("phi3", "Phi3ForSequenceClassification", "Phi3Config", _LLAMA_LIKE,
           body="model", layers="layers", final=("norm",)),"""


def test_add_a_family_as_the_page_says(tree):
    # a family ColossalAI has no pipeline forward for: its row, and None in the review table
    end = "\n]}\n# fmt: on\n\n\ndef get_family"
    edit(tree, "pp_demo/core.py", end, PHI3 + end)
    gptj = '    "gptj": "first_pad_mod",\n'
    edit(tree, "tests/review_table.py", gptj, gptj + '    "phi3": None,\n')
    ran = run_pytest(
        tree,
        "tests/core/test_families.py",
        "tests/colossalai/pull_request/test_verify_pr.py::test_the_changed_files_are_history_that_agrees_with_the_families_table",
        "-m",
        "not slow",
        "-k",
        "phi3 or every_family or history",
        "-v",
    )
    assert ran.returncode == 0, ran.stdout[-2000:]
    phi3 = [line for line in ran.stdout.splitlines() if "phi3" in line and "PASSED" in line]
    assert len(phi3) == 2, ran.stdout[-2000:]  # its fix at every split, under default and eager attention
    check_against_page(tree, "Add a family")
