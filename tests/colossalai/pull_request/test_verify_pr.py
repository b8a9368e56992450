"""The pull request on ColossalAI's own sdists: the diffs apply, verify-pr is reproducible, and
the follow-up takes every forward to model.forward.

Nothing here skips. The sdists come from the cache (``$PP_DEMO_CACHE``, default
``~/.cache/pp_demo/colossalai``), the wheelhouse, or ``pip download`` (CI has PyPI); when none
works the tests fail with the reason. The fresh verify-pr run takes a few minutes: it runs once
for this file.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from pp_demo.core import FAMILIES
from pp_demo.instruments.pull_request.claims import first_pad_wrong
from pp_demo.instruments.pull_request.sdists import (
    CHANGE,
    CHANGE_FILES,
    FOLLOW_UP,
    FOLLOW_UP_FILES,
    PATCHES,
    SDISTS,
    NoSdist,
    default_cache,
    extract_package,
    find_sdist,
    split_patch,
)
from pp_demo.pooling.survey import PROJECTOR_WIDTH
from pp_demo.records.pull_request import changed_lines
from pp_demo.verify.compare import REPRO_FAMILIES

ROOT = pathlib.Path(__file__).resolve().parents[3]
WHEELHOUSE = ROOT / "wheelhouse"
DIFFS = sorted(PATCHES.glob("*.patch"))


def _sdist(requirement):
    try:
        return find_sdist(requirement, default_cache(), WHEELHOUSE, timeout=180)
    except NoSdist as error:
        pytest.fail(str(error))


def test_there_are_two_diffs_the_change_on_three_files_the_follow_up_on_five():
    assert [sorted(split_patch(d.read_text())) for d in DIFFS] == [
        ["llama", "opt", "qwen2"],
        ["bloom", "falcon", "gpt2", "gptj", "mistral"],
    ]


def test_the_changed_files_are_history_that_agrees_with_the_families_table():
    # literals (a growing table may not change what the pull request changed), checked here
    # against the diffs themselves and the rule of each family's ColossalAI 0.5.0 forward
    rule = {name: family.colossalai_rule for name, family in FAMILIES.items()}
    assert [sorted(split_patch((PATCHES / d).read_text())) for d in (CHANGE, FOLLOW_UP)] == [
        sorted(CHANGE_FILES),
        sorted(FOLLOW_UP_FILES),
    ]
    assert REPRO_FAMILIES == CHANGE_FILES == tuple(f for f in FAMILIES if rule[f] == "count")
    assert tuple(f for f in FAMILIES if rule[f] in ("first_pad", "first_pad_mod")) == FOLLOW_UP_FILES


_PHI3_ROW = """
import dataclasses
from pp_demo import core
core.FAMILIES["phi3"] = dataclasses.replace(
    core.FAMILIES["llama"], name="phi3", classifier="Phi3ForSequenceClassification",
    config="Phi3Config", colossalai_rule=None)
from pp_demo.instruments.engine import cli, run as engine
from pp_demo.instruments.pull_request import claims, sdists
from pp_demo.errors import BadInput
from pp_demo.verify import compare
from pp_demo.verify.compare import rules_for
print(rules_for("phi3"))
print(compare.REPRO_FAMILIES, sdists.CHANGE_FILES, sdists.FOLLOW_UP_FILES)
print(sorted({f for _, files in sdists.VARIANTS["change + follow-up"] for f in files}))
try:
    engine.batch_of("phi3")
except BadInput as error:
    print(error)
"""


def test_a_family_added_as_a_row_joins_no_colossalai_list():
    # the recipe's row, with no ColossalAI forward, added before anything reads the table
    ran = subprocess.run([sys.executable, "-c", _PHI3_ROW], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "['rightmost_non_pad']",
        "('llama', 'qwen2', 'opt') ('llama', 'qwen2', 'opt') ('mistral', 'gpt2', 'bloom', 'falcon', 'gptj')",
        "['bloom', 'falcon', 'gpt2', 'gptj', 'llama', 'mistral', 'opt', 'qwen2']",
        "phi3 has no ColossalAI 0.5.0 pipeline forward with the bug",
    ]


@pytest.mark.parametrize("requirement", list(SDISTS))
def test_both_diffs_apply_with_patch_p1_to_the_extracted_sdist(requirement, tmp_path):
    stem = SDISTS[requirement]
    extract_package(_sdist(requirement), stem, tmp_path)
    for diff in DIFFS:
        done = subprocess.run(
            ["patch", "-p1", "--dry-run"], input=diff.read_text(), text=True, cwd=tmp_path, capture_output=True
        )
        assert done.returncode == 0, f"{diff.name} on {stem}: {done.stdout} {done.stderr}"
        assert "fuzz" not in done.stdout
    # against the nightly, only qwen2.py's hunk moves (it has 9 lines fewer above it)
    change = subprocess.run(
        ["patch", "-p1", "--dry-run"], input=DIFFS[0].read_text(), text=True, cwd=tmp_path, capture_output=True
    ).stdout
    assert ("offset" in change) == ("nightly" in stem)


def test_the_sdists_are_found_anywhere_under_a_wheelhouse(tmp_path):
    nested = tmp_path / "wheelhouse" / "sdists"
    nested.mkdir(parents=True)
    for requirement in SDISTS:
        source = _sdist(requirement)
        shutil.copy(source, nested / source.name)
        # an empty cache and no time for pip: only the wheelhouse can answer
        assert find_sdist(requirement, tmp_path / "cache", tmp_path / "wheelhouse", timeout=1) == nested / source.name


# The review table's four rows, and rows written by hand from the arithmetic: one before the
# first pad id, modulo L, against the rightmost non-pad position.
@pytest.mark.parametrize(
    "row, wrong",
    [
        ([0, 0, 5, 6, 7, 8], False),
        ([5, 6, 7, 8, 0, 0], False),
        ([0, 0, 5, 0, 7, 8], False),
        ([5, 0, 7, 8, 0, 0], True),
        ([0, 5, 6, 0], True),  # padded on both sides: pools the last pad, no pad inside needed
        ([5, 0, 7, 8], True),  # unpadded, a pad id (eos) inside
        ([5, 6, 7, 8], False),
        ([5, 6, 0, 0], False),
        ([0, 5, 0, 7], False),
    ],
)
def test_where_the_first_pad_forms_are_wrong(row, wrong):
    assert first_pad_wrong(row) is wrong


def test_the_verdicts_of_the_committed_record_fit_a_projector():
    # notebook 09 prints them; one heading per claim, a verdict line per sdist under it
    from pp_demo.records.pull_request import format_verdicts

    record = json.loads((ROOT / "results" / "verify_pr.json").read_text())
    lines = format_verdicts(record).splitlines()
    assert max(len(line) for line in lines) <= PROJECTOR_WIDTH
    claims = list(dict.fromkeys(row["claim"] for row in record["claims"]))
    assert [line for line in lines if line in claims] == claims
    for row in record["claims"]:
        assert f"  {row['sdist']:<30} {row['verdict']}" in lines


@pytest.mark.parametrize("diff", DIFFS, ids=lambda d: d.name[:4])
def test_the_changed_lines_of_a_diff_fit_a_projector_and_keep_every_change(diff):
    # notebook 09 prints the diffs as their changed lines, dedented, with file:line
    text = diff.read_text()
    shown = changed_lines(text)
    assert max(len(line) for line in shown.splitlines()) <= PROJECTOR_WIDTH
    assert "pad stands for self.config.pad_token_id" in shown
    kept = {(line[0], line[1:].strip()) for line in shown.splitlines() if line.startswith(("- ", "+ "))}
    for line in text.splitlines():
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++")) and line[1:].strip():
            assert (line[0], line[1:].strip().replace("self.config.pad_token_id", "pad")) in kept
    headings = [line for line in shown.splitlines() if ".py:" in line]
    assert sum(h.count(".py:") for h in headings) == len(split_patch(text))  # one hunk per file
    if "0001" in diff.name:
        assert headings == ["llama.py:443, qwen2.py:443, opt.py:412"]  # notebook 06 lists the same lines


def test_without_network_and_cache_verify_pr_says_so_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PIP_NO_INDEX="1", PP_DEMO_CACHE=str(tmp_path / "cache"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pp_demo",
            "verify-pr",
            "--wheelhouse",
            str(tmp_path),
            "--out",
            str(tmp_path / "out.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "colossalai-0.5.0" in done.stderr
    assert not (tmp_path / "out.json").exists()


# A fresh run is the whole command: both sdists, every variant (over a minute on two cores), so
# the three tests that read it are slow ones: CI runs them after `make test`.
@pytest.fixture(scope="module")
def fresh_record(tmp_path_factory):
    for requirement in SDISTS:
        _sdist(requirement)
    out = tmp_path_factory.mktemp("verify_pr") / "verify_pr.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        # the sdists are in the cache now (above); a wheelhouse is only there after `make wheelhouse`
        [
            sys.executable,
            "-m",
            "pp_demo",
            "verify-pr",
            *(["--wheelhouse", str(WHEELHOUSE)] if WHEELHOUSE.is_dir() else []),
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


@pytest.mark.slow
def test_a_fresh_verify_pr_run_equals_the_committed_record(fresh_record):
    committed = json.loads((ROOT / "results" / "verify_pr.json").read_text())
    assert fresh_record == committed


@pytest.mark.slow
@pytest.mark.parametrize("stem, forwards", [("colossalai-0.5.0", 8), ("colossalai-nightly-2025.7.12", 9)])
def test_the_follow_up_takes_every_forward_to_model_forward(fresh_record, stem, forwards):
    matches = fresh_record["sdists"][stem]["change + follow-up"]["matches model.forward"]
    assert len(matches) == forwards
    for family, batches in matches.items():
        assert batches["review"] == "TTTT", family
        assert batches["random"] == "T" * 32, family


@pytest.mark.slow
def test_unpatched_the_first_pad_forwards_miss_only_the_fourth_review_row(fresh_record):
    for stem in SDISTS.values():
        matches = fresh_record["sdists"][stem]["unpatched"]["matches model.forward"]
        for family in ("gpt2", "bloom", "falcon", "gptj", "mistral"):
            assert matches[family]["review"] == "TTTF", (stem, family)
        for family in ("llama", "qwen2", "opt"):
            assert matches[family]["reproduction"] == "FT", (stem, family)
