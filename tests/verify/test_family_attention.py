"""``families --attn sdpa``: where transformers has no sdpa attention for a family's classifier
(BLOOM's on 4.51.3 and 5.x; GPT-J's on 4.51.3 only), it says so in a ValueError with a link. Asked
for by name, such a family is refused in one line; in the table of every family, it is left out
and named, and the others run. Which families lack it is read from transformers' own classes."""

import pytest
import transformers
from helpers import cli_error

from pp_demo.cli import main
from pp_demo.core import FAMILIES
from pp_demo.verify.family_matrix import attention_families

CLASSIFIERS = {
    "llama": "LlamaForSequenceClassification",
    "qwen2": "Qwen2ForSequenceClassification",
    "opt": "OPTForSequenceClassification",
    "qwen3": "Qwen3ForSequenceClassification",
    "mistral": "MistralForSequenceClassification",
    "gpt2": "GPT2ForSequenceClassification",
    "bloom": "BloomForSequenceClassification",
    "falcon": "FalconForSequenceClassification",
    "gptj": "GPTJForSequenceClassification",
}
WITHOUT_SDPA = [family for family, name in CLASSIFIERS.items() if not getattr(transformers, name)._supports_sdpa]


def test_the_classes_read_are_every_familys_and_bloom_has_no_sdpa_on_any_tested_version():
    assert set(CLASSIFIERS) == set(FAMILIES) and "bloom" in WITHOUT_SDPA and "llama" not in WITHOUT_SDPA


@pytest.mark.parametrize("family", WITHOUT_SDPA)
def test_a_family_without_sdpa_asked_for_by_name_is_refused_in_one_line(capsys, family):
    line = cli_error(capsys, "families", "--family", family, "--attn", "sdpa")
    assert f"--attn sdpa: {family}'s classifier has no sdpa attention" in line and "--attn eager" in line
    assert "github" not in line


def test_the_table_of_every_family_with_sdpa_names_those_left_out_and_runs_the_others(capsys):
    runs, left_out = attention_families(list(FAMILIES), "sdpa")
    assert left_out == WITHOUT_SDPA and runs == [family for family in FAMILIES if family not in WITHOUT_SDPA]
    assert attention_families(["bloom"], "eager") == (["bloom"], [])
    assert main(["families", "--attn", "sdpa", "--cases", "left"]) == 0
    out = capsys.readouterr().out
    assert (
        out.splitlines()[0] == f"--attn sdpa: left out {', '.join(left_out)}, whose classifiers have no sdpa attention"
    )
    table = out.split("\n", 1)[1]
    assert all(f"\n{family} " in table or table.startswith(f"{family} ") for family in runs), table
    assert not any(f"\n{family} " in table for family in left_out)
