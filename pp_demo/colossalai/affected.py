"""Who is affected by the pooling bugs of ColossalAI 0.5.0, rendered from the tested conditions.

The README, notebook 01 and the guide say which forwards pool another token than
``model.forward`` and on which rows. Written by hand such a line drifts ("on left-padded batches"
forgets a right-padded row with a pad id inside its text), so it is rendered here from two
tables that are tested elsewhere: each family's rule in ColossalAI 0.5.0
(``pipeline.families``) and each rule's failure condition (``pooling.failure``, checked on every
row). The plain sentence is for reading aloud; the exact one is its footnote.
"""

from pp_demo.core import FAMILIES
from pp_demo.pooling.failure import PLAIN, SENTENCES

__all__ = ["affected_families", "who_is_affected"]

WHEN = "ColossalAI 0.5.0 with a pipeline size above 1 (only then does its policy swap in its pipeline forwards)"
_MARKS = "¹²³⁴"


def affected_families() -> dict[str, list[str]]:
    """Each wrong rule ColossalAI 0.5.0 uses, with the families whose forward carries it; the two
    first-pad variants read the same token on every row, so they are one entry, ``first_pad_mod``."""
    groups: dict[str, list[str]] = {}
    for name, family in FAMILIES.items():
        if family.colossalai_rule is None:
            continue  # ColossalAI 0.5.0 has no pipeline forward for this family
        rule = "first_pad_mod" if family.colossalai_rule.startswith("first_pad") else family.colossalai_rule
        if SENTENCES[rule, "forward"].startswith("never"):
            continue  # the fix: pools where model.forward does
        groups.setdefault(rule, []).append(name)
    return groups


def who_is_affected() -> str:
    """One markdown paragraph, then one footnote line per condition, each ``Exactly: ...``."""
    parts: list[str] = []
    notes: list[str] = []
    for mark, (rule, families) in zip(_MARKS, affected_families().items(), strict=False):
        verb = " pool another token than `model.forward`" if not parts else ""
        names = families[0] if len(families) == 1 else f"{', '.join(families[:-1])} and {families[-1]}"
        parts.append(f"its {names} forwards{verb} on rows where {PLAIN[rule, 'forward']}{mark}")
        notes.append(f"{mark} Exactly: {SENTENCES[rule, 'forward']}.")
    lines = [f"**Who is affected**: {WHEN}: {'; '.join(parts)}.", ""]
    return "\n".join([*lines, *(f"{note}  " for note in notes)]).rstrip() + "\n"
