"""When each pooling rule is wrong, as one sentence and one predicate, per reference.

A key point that says "right-padded rows match" is a claim about every row there is. This module
writes each such claim once, as a predicate over a row's *shape*, and
``tests/pooling/test_failure.py`` checks every predicate against the rule itself on every row of
length 1 to 8. Sentences elsewhere (notebooks, the README, the guide) are rendered from
``SENTENCES`` or tested against the predicates.

A row's shape is a string with one letter per position:

- ``r``: a real token whose id is not the pad id (mask 1);
- ``p``: padding: the pad id with mask 0;
- ``e``: a real token that carries the pad id (mask 1): an eos when pad == eos.

Positions are judged where tensor indexing lands (a raw ``-1`` reads the last position), so
``first_pad`` (raw ``-1``) and ``first_pad_mod`` (``-1 % L``) always read the same token; they
differ only in the number they return, which matters where ``-1`` is not an index (notebook 08).

The two references:

- ``"true_last"``: the last position the mask marks real (``r`` or ``e``). A row of padding only
  has none and is not judged.
- ``"forward"``: the position ``model.forward`` pools (transformers 4.51.3 and 5.x): the rightmost
  ``r``, or 0 on a row with none.
"""

import re
from dataclasses import dataclass

__all__ = [
    "FailureCondition",
    "FAILURES",
    "SENTENCES",
    "PLAIN",
    "plain_and_exact",
    "is_wrong",
    "wrong_when",
    "render_failures",
]


@dataclass(frozen=True)
class FailureCondition:
    """Rule ``rule`` misses ``reference`` exactly on the rows whose shape matches ``patterns``."""

    rule: str
    reference: str  # "true_last" or "forward"
    sentence: str  # completes "<rule> is wrong when ...": exact on every row, the footnote
    patterns: tuple[str, ...]  # regular expressions over the shape; any one match means wrong
    negate: bool = False  # True: wrong when NO pattern matches (a "right only when" condition)
    plain: str = ""  # the same, read aloud: exact on every row with a non-pad token; "": the sentence

    def wrong(self, shape: str) -> bool:
        return any(re.search(pattern, shape) for pattern in self.patterns) != self.negate


_MASK_RULE_VS_FORWARD = (
    "a real eos equal to pad comes after the last non-pad token (with no non-pad token: after position 0)",
    (r"r[^r]*e[^r]*$", r"^[pe]+e[pe]*$"),
)
_EOS_AFTER_TEXT = "a real eos that carries the pad id ends the text"

# fmt: off
FAILURES: tuple[FailureCondition, ...] = (
    FailureCondition("count", "forward",
                     "some pad id comes before the last non-pad token, or the row has no non-pad "
                     "token and is longer than one",
                     (r"[pe].*r", r"^[pe]{2,}$"),
                     plain="a pad id comes before the last non-pad token"),
    FailureCondition("count", "true_last",
                     "the row is anything but real non-pad tokens followed by padding (with no "
                     "non-pad token: unless it ends in a real eos)",
                     (r"^r+p*$", r"^[pe]*e$"), negate=True,
                     plain="the row is anything but non-pad tokens, then padding if any"),
    *(FailureCondition(rule, "forward",
                       "the first pad id follows a real token and a non-pad token comes after it, "
                       "or the row is longer than one token and starts and ends with a pad id",
                       (r"^r+[pe].*r", r"^[pe].*[pe]$"),
                       plain="a pad id sits inside text that starts the row, or a row of two or more "
                             "tokens starts and ends with a pad id")
      for rule in ("first_pad", "first_pad_mod")),
    *(FailureCondition(rule, "true_last",
                       "the first pad id follows a real token and a real token (an eos equal to "
                       "pad included) comes at or after it, or the row starts with a pad id and "
                       "ends with padding",
                       (r"^r+(e|p+.*[re])", r"^[pe].*p$"),
                       plain="the text starts the row and goes on at or after its first pad id, or the "
                             "row starts with a pad id and ends with padding")
      for rule in ("first_pad", "first_pad_mod")),
    FailureCondition("rightmost_non_pad", "forward", "never: it is model.forward's rule", ()),
    FailureCondition("rightmost_non_pad", "true_last", *_MASK_RULE_VS_FORWARD, plain=_EOS_AFTER_TEXT),
    *(FailureCondition(rule, "true_last", "never: it reads the mask that defines the reference", ())
      for rule in ("rightmost_attended", "attended_flip", "attended_cumsum")),
    *(FailureCondition(rule, "forward", *_MASK_RULE_VS_FORWARD, plain=_EOS_AFTER_TEXT)
      for rule in ("rightmost_attended", "attended_cumsum")),
    FailureCondition("attended_flip", "forward",
                     _MASK_RULE_VS_FORWARD[0] + ", or the row is padding only and longer than one",
                     (*_MASK_RULE_VS_FORWARD[1], r"^p{2,}$"), plain=_EOS_AFTER_TEXT),
)
# fmt: on

SENTENCES: dict[tuple[str, str], str] = {(c.rule, c.reference): c.sentence for c in FAILURES}
"""``(rule, reference) -> sentence``: the exact condition, true on every row (the footnote)."""

PLAIN: dict[tuple[str, str], str] = {(c.rule, c.reference): c.plain or c.sentence for c in FAILURES}
"""``(rule, reference) -> plain sentence``: what an instructor reads aloud. It states the exact
condition on every row with at least one non-pad token; rows of pad ids only are the footnote's."""


def _condition(rule: str, reference: str) -> FailureCondition:
    for condition in FAILURES:
        if (condition.rule, condition.reference) == (rule, reference):
            return condition
    raise KeyError(f"no failure condition for rule {rule!r} against reference {reference!r}")


def plain_and_exact(rule: str, reference: str) -> str:
    """The plain sentence, then the exact one in brackets where they differ: how a key point,
    an objective or the guide writes a condition, so the room reads the first and the footnote holds."""
    exact, plain = _condition(rule, reference).sentence, PLAIN[rule, reference]
    return plain if plain == exact else f"{plain} (exactly: {exact})"


def wrong_when(rule: str, reference: str) -> str:
    """``"<rule> misses <reference> when <sentence>."``: the one way a failure condition is written."""
    sentence = _condition(rule, reference).sentence
    what = {"true_last": "the true last real token", "forward": "model.forward's position"}[reference]
    return f"{rule} misses {what} when {sentence}."


def is_wrong(rule: str, reference: str, shape: str) -> bool:
    """Does ``rule`` miss ``reference`` on a row of this shape (letters ``r``, ``p``, ``e``)?"""
    if not shape or set(shape) - set("rpe"):
        raise ValueError(f"a row shape is a non-empty string of r, p and e, got {shape!r}")
    return _condition(rule, reference).wrong(shape)


_PLACEHOLDER = re.compile(r"\{fails: *(\w+) +vs +(\w+) *\}")


def render_failures(text: str) -> str:
    """Replace every ``{fails: RULE vs REFERENCE}`` in ``text`` by ``plain_and_exact``.

    Key points, objectives and the guide write a failure condition this way, so that what a
    learner takes home is the sentence the exhaustive test checked, never a paraphrase of it.
    """

    def sentence(match: re.Match[str]) -> str:
        rule, reference = match.groups()
        if (rule, reference) not in SENTENCES:
            raise KeyError(f"no failure condition for {match.group(0)!r}")
        return plain_and_exact(rule, reference)

    return _PLACEHOLDER.sub(sentence, text)


# ---- plain claims: sentences to read aloud, each true on every row its pattern covers
# A failure condition above is exact, and reads like one. A claim is simpler and need not cover
# every row; ``tests/pooling/test_class_claims.py`` checks each on every row of length 1 to 6.
# Notebook 07's table of classes is written from these (``pp_demo.pooling.survey.format_classes``),
# with the exact condition (``wrong_when``) as its footnote.


@dataclass(frozen=True)
class Claim:
    """On every row whose shape matches ``pattern``, ``rule`` is wrong (``wrong``) or right against
    ``reference``; ``sentence`` says so in words."""

    rule: str
    reference: str
    wrong: bool
    sentence: str
    pattern: str

    def covers(self, shape: str) -> bool:
        return re.search(self.pattern, shape) is not None


# fmt: off
CLAIMS: tuple[Claim, ...] = (
    Claim("count", "true_last", True, "wrong on every left-padded row", r"^p.*r"),
    Claim("count", "true_last", True,
          "wrong when the text holds a token that carries the pad id (an eos, when pad == eos)", r"r.*e|e.*r"),
    Claim("count", "true_last", False, "right on ordinary tokens followed by padding", r"^r+p*$"),
    Claim("first_pad_mod", "true_last", False, "right on a left-padded or a right-padded row", r"^(p+r+|r+p*)$"),
    Claim("first_pad_mod", "true_last", True, "wrong on a row padded on both sides", r"^p.*r.*p$"),
    Claim("first_pad_mod", "true_last", True,
          "wrong when the text starts with ordinary tokens and then a token that carries the pad id: it stops "
          "there", r"^r+e"),
    Claim("rightmost_non_pad", "true_last", False, "right when the last real token is an ordinary one", r"rp*$"),
    Claim("rightmost_non_pad", "true_last", True,
          "wrong when the text ends in a token that carries the pad id (a trailing eos, when pad == eos)",
          r"r[^r]*e[^r]*$"),
    Claim("rightmost_attended", "true_last", False, "right on every row: it reads the mask", r"."),
)
# fmt: on


def claims_about(rule: str, reference: str = "true_last") -> str:
    """The claims about ``rule`` against ``reference``, as sentences to read aloud, rights first."""
    found = [c for c in CLAIMS if (c.rule, c.reference) == (rule, reference)]
    if not found:
        raise KeyError(f"no plain claim about rule {rule!r} against reference {reference!r}")
    return "; ".join(c.sentence for c in sorted(found, key=lambda c: c.wrong))  # a stable sort: rights first
