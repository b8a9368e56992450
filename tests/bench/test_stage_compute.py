"""docs/results.md's three-way compute of one micro-batch against its committed run,
results/stage_compute.json (``python -m tools.stage_compute``): the table is the file's, each number
the prose states is read from the file here again, and the ratios are those of neighbouring calls."""

import re

import pytest

from tools.stage_compute import MICRO_BATCHES, MODES, VARIANTS, _summary, format_table


@pytest.fixture(scope="module")
def run(committed):
    return committed("stage_compute.json")


def test_the_run_has_every_m_and_mode_with_the_three_variants(run):
    assert [(r["m"], r["mode"]) for r in run["rows"]] == [(m, mode) for m in MICRO_BATCHES for mode in MODES]
    assert all(r["rows"] == 16 // r["m"] for r in run["rows"])
    assert all(set(r["cpu_ms"]) == set(VARIANTS) for r in run["rows"])


def test_ratios_are_medians_of_neighbouring_calls_not_ratios_of_medians():
    # the machine slows for the last two calls: each pair still says pp_demo costs 1.1 of model.forward
    times = {"model.forward": [1.0, 1.0, 2.0, 2.0], "pp_demo": [1.1, 1.1, 2.2, 2.2], "colossalai": [1.0, 1.0, 2.2, 2.2]}
    summary = _summary(times)
    assert summary["over_model_forward"] == {"model.forward": 1.0, "pp_demo": 1.1, "colossalai": 1.05}
    assert summary["pp_demo_over_colossalai"] == 1.05
    assert summary["cpu_ms"] == {"model.forward": 1500.0, "pp_demo": 1650.0, "colossalai": 1600.0}


def test_the_page_shows_the_committed_table(run, results_page):
    block = re.search(r"<!-- stage-compute:begin -->\n(.*?)\n<!-- stage-compute:end -->", results_page, flags=re.S)
    assert block and block[1] == format_table(run["rows"])


def test_the_numbers_the_page_states_are_the_files(run, results_page):
    over_colossalai = [r["pp_demo_over_colossalai"] for r in run["rows"]]
    over_forward = [r["over_model_forward"]["pp_demo"] for r in run["rows"]]
    below, above = sum(x < 1 for x in over_colossalai), sum(x > 1 for x in over_colossalai)
    stated = (
        f"pp_demo's stages cost between {min(over_colossalai):.2f} and {max(over_colossalai):.2f} times "
        f"ColossalAI's forward, below 1 in {below} rows of {len(over_colossalai)} and above in {above}, and "
        f"between {min(over_forward):.2f} and {max(over_forward):.2f} times `model.forward`'s"
    )
    assert stated in " ".join(results_page.split())
    assert below and above  # "no difference of one sign"
    assert f"median over {run['settings']['calls']} calls" in results_page
