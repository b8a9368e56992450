"""Constants shared by the tests, written once from the specification: the review table of
the pull request (which position each rule pools on each padding row) and ColossalAI
0.5.0's source (which rule each family's pipeline forward uses). Not computed by pp_demo,
so a test that compares pp_demo with them can fail.

Importable from any test module as ``from review_table import ...`` (pytest puts ``tests/``
on the path). Not a conftest: ``tests/browser`` has a conftest of its own, and two modules
named ``conftest`` cannot both be imported by that name.
"""

FIVE_ROWS = ["left", "right", "left_pad_in_content", "right_pad_in_content", "unpadded"]
"""The review table's four rows and the unpadded row, in this order everywhere below."""

# Whether a pipeline pooling by each rule returns model.forward's logits on FIVE_ROWS,
# from the review table: model.forward pools the rightmost non-pad id (left 5, right 3,
# lpic 5, rpic 3, unpadded 5); count - 1 pools 3, 3, 2, 2, 5; the first pad - 1 pools
# 5 (wrapped from -1), 3, 5, 0, 5: it misses only the right-padded row with a pad id
# among its real tokens.
# A table, one row per line (the formatter would put one value per line).
# fmt: off
MATCHES_FORWARD = {
    #                     left   right  lpic   rpic   unpadded
    "count":             [False, True,  False, False, True],
    "first_pad_mod":     [True,  True,  True,  False, True],
    "first_pad":         [True,  True,  True,  False, True],
    "rightmost_non_pad": [True,  True,  True,  True,  True],
}
# fmt: on

SIX_ROWS = [*FIVE_ROWS, "left"]
"""FIVE_ROWS and the left row again: a batch of six splits into micro-batches of 2 and 3."""
COUNT_RULE_MATCHES_SIX = [*MATCHES_FORWARD["count"], False]

# The rule of each family's pipeline forward in ColossalAI 0.5.0 (its shardformer
# policies' *ForSequenceClassification forwards); qwen3 was fixed after 0.5.0's model list.
COLOSSALAI_RULE = {
    "llama": "count",
    "qwen2": "count",
    "opt": "count",
    "qwen3": "rightmost_non_pad",
    "mistral": "first_pad",
    "gpt2": "first_pad_mod",
    "bloom": "first_pad_mod",
    "falcon": "first_pad_mod",
    "gptj": "first_pad_mod",
}
