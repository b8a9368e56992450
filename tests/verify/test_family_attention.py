"""``families --attn sdpa``: transformers has no sdpa attention for BLOOM's and GPT-J's
classifiers, and says so in a ValueError with a link. Asked for by name, such a family is refused
in one line; in the table of every family, it is left out and named, and the others run."""

import pytest
from helpers import cli_error

from pp_demo.cli import main
from pp_demo.core import FAMILIES
from pp_demo.verify.family_matrix import attention_families


@pytest.mark.parametrize("family", ["bloom", "gptj"])
def test_a_family_without_sdpa_asked_for_by_name_is_refused_in_one_line(capsys, family):
    line = cli_error(capsys, "families", "--family", family, "--attn", "sdpa")
    assert f"--attn sdpa: {family}'s classifier has no sdpa attention" in line and "--attn eager" in line
    assert "github" not in line


def test_the_table_of_every_family_with_sdpa_names_those_left_out_and_runs_the_others(capsys):
    runs, left_out = attention_families(list(FAMILIES), "sdpa")
    assert {"bloom", "gptj"} <= set(left_out) and "llama" in runs and not set(runs) & set(left_out)
    assert attention_families(["bloom"], "eager") == (["bloom"], [])
    assert main(["families", "--attn", "sdpa", "--cases", "left"]) == 0
    out = capsys.readouterr().out
    assert (
        out.splitlines()[0] == f"--attn sdpa: left out {', '.join(left_out)}, whose classifiers have no sdpa attention"
    )
    table = out.split("\n", 1)[1]
    assert all(f"\n{family} " in table or table.startswith(f"{family} ") for family in runs), table
    assert not any(f"\n{family} " in table for family in left_out)
