"""docs/results.md's page-fault findings against their committed count, results/page_faults.json
(``python -m tools.page_faults``): the table is the file's, and each number the prose states is
read from the file here again."""

import re

import pytest

from tools.page_faults import MICRO_BATCHES, format_table


@pytest.fixture(scope="module")
def count(committed):
    return committed("page_faults.json")


def test_the_count_has_both_mallocs_at_every_m_with_a_number_per_forward(count):
    assert [(r["malloc"], r["m"]) for r in count["rows"]] == [
        (malloc, m) for malloc in ("default", "fixed") for m in MICRO_BATCHES
    ]
    for row in count["rows"]:
        assert [len(c) for c in (*row["ranks"], *row["one_process"])] == [row["m"]] * 4


def test_the_page_shows_the_committed_table(count, results_page):
    block = re.search(r"<!-- page-faults:begin -->\n(.*?)\n<!-- page-faults:end -->", results_page, flags=re.S)
    assert block and block[1] == format_table(count["rows"])


def test_the_numbers_the_page_states_are_the_files(count, results_page):
    at_2 = next(r for r in count["rows"] if (r["malloc"], r["m"]) == ("default", 2))
    (a, b), (c, d) = at_2["ranks"]
    one = [n for stage in at_2["one_process"] for n in stage]
    fixed = [n for r in count["rows"] if r["malloc"] == "fixed" for c in (*r["ranks"], *r["one_process"]) for n in c]
    prose = " ".join(results_page.split())
    assert f"rank 0 took {a:,} and {b:,} faults per forward while rank 1" in prose
    assert f"took {c:,} and {d:,}, and one process, doing both stages, between {min(one):,} and {max(one):,}" in prose
    assert f"no forward took more than {max(fixed):,}." in prose


def test_the_fixed_thresholds_keep_every_forward_under_a_thousand_faults_where_the_default_did_not(count):
    # what the benchmark rests on: a forward's activations here are MiBs, hundreds of pages each
    fixed = [n for r in count["rows"] if r["malloc"] == "fixed" for c in (*r["ranks"], *r["one_process"]) for n in c]
    default = [
        n for r in count["rows"] if r["malloc"] == "default" for c in (*r["ranks"], *r["one_process"]) for n in c
    ]
    assert max(fixed) < 1000 < max(default)
