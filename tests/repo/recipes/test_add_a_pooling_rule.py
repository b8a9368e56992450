"""docs/architecture.md's recipe "Add a pooling rule", followed in a copy of the tree."""

import pytest
from recipe_tree import add, check_against_page, edit, run_pytest

# each recipe runs every notebook in its copy: over a minute on 2 cores
pytestmark = pytest.mark.slow


ATTENDED_MAX = '''def attended_max(attention_mask: torch.Tensor) -> torch.Tensor:
    """The largest attended position (-1 where none is): class d, read with max, not argmax."""
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device).expand_as(attention_mask)
    return torch.where(attention_mask.bool(), positions, -1).max(-1).values


'''


def test_add_a_pooling_rule_as_the_page_says(tree):
    # another spelling of the mask rule (class d), not a core rule: the survey's class takes it
    registry = "@dataclass(frozen=True)\nclass Rule:"
    edit(tree, "pp_demo/core.py", registry, ATTENDED_MAX + registry)
    known = '    Rule("known_lengths", known_lengths,'
    entry = '    Rule("attended_max", attended_max, _MASK, "attention mask, largest"),\n'
    edit(tree, "pp_demo/core.py", known, entry + known)
    cumsum = '    "attended_cumsum":    [5,   3,   5,   3,   5,        0,     3],\n'
    by_hand = '    "attended_max":       [5,   3,   5,   3,   5,       -1,     3],\n'  # from its definition
    edit(tree, "tests/core/test_rules.py", cumsum, cumsum + by_hand)
    add(tree, "pp_demo/pooling/survey.py", '("attended_flip", "attended_cumsum"', ', "attended_max"')
    failure = "pp_demo/pooling/failure.py"  # never wrong against the mask; against forward as flip is
    add(tree, failure, '("rightmost_attended", "attended_flip", "attended_cumsum"', ', "attended_max"')
    edit(tree, failure, 'FailureCondition("attended_flip", "forward",', '*(FailureCondition(rule, "forward",')
    flip = '(*_MASK_RULE_VS_FORWARD[1], r"^p{2,}$"), plain=_EOS_AFTER_TEXT)'
    add(tree, failure, flip, '\n      for rule in ("attended_flip", "attended_max"))')
    readings = "tests/pooling/test_failure_readings.py"  # both conditions, read again by hand: flip's
    add(tree, readings, '("rightmost_attended", "attended_flip", "attended_cumsum"', ', "attended_max"')
    edit(tree, readings, '    ("attended_flip", "forward"): (', '    **{(rule, "forward"): (')
    flip_reading = '        lambda s: _eos_after(s) or (set(s) == {"p"} and len(s) > 1),\n    ),\n'
    edit(tree, readings, flip_reading, flip_reading[:-2] + '\n    for rule in ("attended_flip", "attended_max")},\n')
    edit(tree, "tests/workshop/test_explore.py", "len(PADDED_RULES) == 7", "len(PADDED_RULES) == 8")
    add(tree, "tests/pooling/test_survey.py", '        "attended_cumsum",\n', '        "attended_max",\n')
    ran = run_pytest(
        tree, "-q", "tests/core/test_rules.py", "tests/pooling", "tests/workshop/test_explore.py", "-m", "not slow"
    )
    assert ran.returncode == 0, ran.stdout[-2000:]
    check_against_page(tree, "Add a pooling rule")
