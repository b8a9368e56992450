"""The bug class (notebook 07): survey data, the packed-batch rule, the spellings of class d.

Every expected value below is written by hand: classes, issue and PR numbers from
``shared/SURVEY.md``; positions worked out from the tokens.
"""

import re

import matplotlib
import pytest
import torch

from pp_demo.core import CASES, RULES, get_rule, known_lengths
from pp_demo.errors import BadInput
from pp_demo.figures.pooling import draw_class_grid
from pp_demo.pooling.packed import PACKED, class_grid, pack, run_on_cases
from pp_demo.pooling.positions import pooled_positions
from pp_demo.pooling.survey import (
    CLASSES,
    INCIDENTS,
    PROJECTOR_WIDTH,
    RULE_CLASS,
    SURVEY,
    format_classes,
    format_incidents,
    format_survey,
)

# ---------------------------------------------------------------- the survey as data

# project (start of its name in SURVEY) -> class, as SURVEY.md gives it
EXPECTED_CLASS = {
    "transformers >= 4.49": "c",
    "transformers <= 4.48": "b",
    "ColossalAI 0.5.0 pipeline forwards: llama": "a",
    "ColossalAI 0.5.0 pipeline forwards: gpt2": "b",
    "ColossalChat": "d",
    "TRL RewardTrainer": "c",
    "TRL PPO": "b",
    "OpenRLHF": "d",
    "DeepSpeed-Chat": "b",
    "NeMo-Aligner": "e",
    "torchtune": "d",
    "LLaMA-Factory": "a",
    "PEFT": "a",
    "sentence-transformers": "d",
    "verl": "d",
    "vLLM": "e",
    "SGLang": "e",
    "text-embeddings-inference": "e",
    "NeMo Automodel": "a",
}

# the issue and PR numbers SURVEY.md gives for a row
EXPECTED_CITATIONS = {
    "transformers >= 4.49": {"PR 35911"},
    "transformers <= 4.48": {"PR 24979", "PR 46782"},
    "torchtune": {"PR 2066"},
    "LLaMA-Factory": {"issue 689"},
    "PEFT": {"issue 3620", "PR 3629"},
}

EXPECTED_INCIDENTS = {
    ("RLHFlow/RLHF-Reward-Modeling", 49),
    ("allenai/reward-bench", 154),
    ("allenai/reward-bench", 137),
    ("huggingface/trl", 937),
    ("EleutherAI/gpt-neox", 1285),
    ("hiyouga/LLaMA-Factory", 689),
    ("huggingface/peft", 3620),
}


def _row(prefix):
    rows = [r for r in SURVEY if r.project.startswith(prefix)]
    assert len(rows) == 1, f"{prefix!r} matches {len(rows)} survey rows"
    return rows[0]


def test_the_survey_loads():
    assert len(SURVEY) == len(EXPECTED_CLASS)
    assert list(CLASSES) == ["a", "b", "c", "d", "e"]
    assert len({r.project for r in SURVEY}) == len(SURVEY)


@pytest.mark.parametrize("prefix", EXPECTED_CLASS)
def test_each_row_has_the_class_the_survey_gives(prefix):
    assert _row(prefix).rule_class == EXPECTED_CLASS[prefix]


@pytest.mark.parametrize("row", SURVEY, ids=[r.project[:30] for r in SURVEY])
def test_each_row_names_a_class_a_repository_and_a_file(row):
    assert row.rule_class in CLASSES
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", row.repository), row.repository
    assert row.path.strip() and row.path != "-"
    assert row.padding.strip()
    assert all(re.fullmatch(r"(PR|issue) \d+", c) for c in row.citations), row.citations


@pytest.mark.parametrize("prefix", EXPECTED_CITATIONS)
def test_rows_carry_the_numbers_the_survey_gives(prefix):
    assert EXPECTED_CITATIONS[prefix] <= set(_row(prefix).citations)


def test_the_incidents_are_the_surveys():
    assert {(i.repository, i.number) for i in INCIDENTS} == EXPECTED_INCIDENTS
    assert all(i.what.strip() for i in INCIDENTS)


def test_every_registered_rule_has_a_class_and_every_class_a_registered_rule():
    assert set(RULE_CLASS) == set(RULES)
    for c in CLASSES.values():
        assert all(name in RULES for name in c.rules)
    assert RULE_CLASS["count"] == "a" and RULE_CLASS["known_lengths"] == "e"
    assert [n for n, letter in RULE_CLASS.items() if letter == "d"] == [
        "rightmost_attended",
        "attended_flip",
        "attended_cumsum",
    ]


def test_the_rendered_table_comes_from_the_rows():
    text = format_survey()
    for row in SURVEY:
        assert row.repository in text
    header = next(line for line in text.splitlines() if line.startswith("(class) project"))
    assert header.split() == ["(class)", "project", "where", "padding"]
    assert "padding: the padding the code assumes" in text  # the legend says what the short headings mean
    assert "35911" in text and "3620" in text
    assert "(a) ColossalAI 0.5.0" in text and "(e) vLLM LastPool" in text  # each project starts with its class
    assert "rules: rightmost_attended, attended_flip, attended_cumsum" in format_classes()
    assert format_incidents().splitlines()[0].startswith("RLHFlow/RLHF-Reward-Modeling#49: ")


def test_the_rendered_tables_fit_a_projector():
    # notebook 07 prints all three; a room reads them off a projector
    for text in (format_classes(), format_survey(), format_incidents()):
        assert max(len(line) for line in text.splitlines()) <= PROJECTOR_WIDTH
    assert all(ref in format_incidents() for ref in ("huggingface/trl#937", "huggingface/peft#3620"))
    assert "    rules: count" in format_classes().splitlines()


# ---------------------------------------------------------------- rule (e) on a real packed batch


def test_known_lengths_on_a_packed_batch():
    # three sequences of lengths 3, 1, 4 end to end in one row of 8 tokens
    ids = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12]])
    cu_seqlens = torch.tensor([0, 3, 4, 8], dtype=torch.int32)
    got = pooled_positions("known_lengths", input_ids=ids, cu_seqlens=cu_seqlens)
    assert got.tolist() == [2, 3, 7] and got.dtype == torch.long
    assert known_lengths(torch.tensor([0, 1])).tolist() == [0]
    assert known_lengths(torch.tensor([0, 5, 6, 10], dtype=torch.int64)).tolist() == [4, 5, 9]


def test_the_packed_example_and_pack():
    ids, mask, cu_seqlens = PACKED.tensors()
    assert ids.tolist() == [[5, 6, 7, 8, 9, 10, 11, 12]] and mask.tolist() == [[1] * 8]
    assert cu_seqlens.tolist() == [0, 3, 4, 8] and cu_seqlens.dtype == torch.int32
    assert PACKED.true_last == (2, 3, 7)
    with pytest.raises(ValueError, match="no empty sequence"):
        pack([[5], []])


@pytest.mark.parametrize(
    "bad, error, message",
    [
        ([0, 3], BadInput, "cu_seqlens must be a torch.Tensor, got list"),
        (torch.tensor([[0, 3]]), ValueError, "1-D"),
        (torch.tensor([0.0, 3.0]), BadInput, r"cu_seqlens must hold integers \(torch.long\), got torch.float32"),
        (torch.tensor([True, False]), BadInput, r"cu_seqlens must hold integers \(torch.long\), got torch.bool"),
        (torch.tensor([0]), ValueError, "at least two"),
        (torch.tensor([1, 3]), ValueError, "start at 0"),
        (torch.tensor([0, 3, 2]), ValueError, "non-decreasing"),
        (torch.tensor([0, 3, 3, 5]), ValueError, r"empty sequences \(numbers \[1\]\)"),
    ],
    ids=["list", "2-D", "float", "bool", "one entry", "offset", "decreasing", "empty"],
)
def test_known_lengths_refuses_what_it_cannot_answer(bad, error, message):
    with pytest.raises(error, match=message):
        pooled_positions("known_lengths", cu_seqlens=bad)


def test_known_lengths_needs_lengths_and_a_matching_row():
    with pytest.raises(ValueError, match="needs cu_seqlens"):
        pooled_positions("known_lengths", input_ids=torch.tensor([[5, 6]]), pad_token_id=0)
    with pytest.raises(ValueError, match="one row of 8 tokens"):
        pooled_positions("known_lengths", input_ids=torch.tensor([[5, 6, 7]]), cu_seqlens=torch.tensor([0, 3, 4, 8]))


# ---------------------------------------------------------------- the spellings of class (d)

SPELLINGS = ["attended_flip", "attended_cumsum"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_spellings_equal_the_canonical_rule_on_every_case_with_a_real_token(spelling):
    for case in CASES.values():
        if case.true_last is None:
            continue
        _, mask = case.tensors()
        assert pooled_positions(spelling, attention_mask=mask).tolist() == [case.true_last]
        assert pooled_positions("rightmost_attended", attention_mask=mask).tolist() == [case.true_last]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_spellings_equal_the_canonical_rule_on_random_masks(spelling):
    generator = torch.Generator().manual_seed(7)
    mask = torch.randint(0, 2, (200, 9), generator=generator)
    mask[:, 4] = 1  # at least one attended token per row
    assert torch.equal(
        pooled_positions(spelling, attention_mask=mask), pooled_positions("rightmost_attended", attention_mask=mask)
    )


def test_on_the_all_pad_row_the_spellings_disagree():
    _, mask = CASES["all_pad"].tensors()  # six positions, none attended
    got = {
        name: pooled_positions(name, attention_mask=mask).tolist()
        for name in ["rightmost_attended", "attended_flip", "attended_cumsum"]
    }
    assert got == {"rightmost_attended": [0], "attended_flip": [5], "attended_cumsum": [0]}


# ---------------------------------------------------------------- the rule x case grid


def test_the_grid_judges_every_rule_on_every_case_and_the_packed_batch():
    grid = {(v.rule, v.case): v for row in class_grid() for v in row}
    assert len(grid) == len(RULES) * (len(CASES) + 1)
    # rule (e) cannot run on a padded row and is the only rule right on the packed batch
    assert {grid["known_lengths", c].status for c in CASES} == {"cannot run"}
    assert grid["known_lengths", "packed"].positions == (2, 3, 7)
    assert [n for n in RULES if grid[n, "packed"].right] == ["known_lengths"]
    assert grid["count", "packed"].positions == (7,) and grid["first_pad", "packed"].positions == (-1,)
    # c and d part on the trailing eos
    assert [grid["rightmost_non_pad", "trailing_eos"].status, grid["rightmost_attended", "trailing_eos"].status] == [
        "wrong",
        "right",
    ]
    assert grid["attended_flip", "all_pad"].status == "no answer"


def test_the_grid_figure_colours_one_cell_per_verdict():
    grid = class_grid()
    fig = draw_class_grid(grid)
    patches = fig.axes[0].patches
    assert len(patches) == len(RULES) * (len(CASES) + 1)
    red = [p for p in patches if p.get_facecolor()[:3] == matplotlib.colors.to_rgb("#D55E00")]  # Okabe-Ito vermillion
    assert len(red) == sum(v.status == "wrong" for row in grid for v in row)
    assert sum(p.get_hatch() == "//" for p in patches) == len(CASES)


def test_run_on_cases_gives_the_raw_position_per_case():
    got = run_on_cases(lambda ids, mask, pad: get_rule("count").fn(ids, pad))
    assert got == {
        "left": 3,
        "right": 3,
        "left_pad_in_content": 2,
        "right_pad_in_content": 2,
        "unpadded": 5,
        "all_pad": -1,
        "trailing_eos": 2,
    }


def test_projects_are_counted_once_per_repository_and_the_readme_says_how_many():
    from pathlib import Path

    from pp_demo.pooling.survey import projects_with_a_rule

    # transformers (2 rows), ColossalAI (3), TRL (2) each count once; the four without a rule not at all
    assert len(SURVEY) == 19 and len(projects_with_a_rule()) == 15
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    said = re.search(r"how the (\d+) projects with a rule of their own, of (\d+) surveyed", readme)
    assert said and (int(said.group(1)), int(said.group(2))) == (len(projects_with_a_rule()), len(SURVEY))
