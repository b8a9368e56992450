"""Common wrong answers to the exercises, and the misconception each one reveals.

For the facilitator guide (``docs/facilitator.md``, made by ``tools/episodes.py guide``): next to
each wrong answer the guide prints the line the checker itself gives for it (``status``), so
what an instructor reads is what the attendee sees. ``tests/test_episodes.py`` checks that every
exercise has at least one entry and that the checker rejects every one of them.

Each entry: ``(answer, how to show it, what it reveals)``; ``how to show it`` is None when the
answer's ``repr`` reads well. Entries for a notebook that is not in the checkout yet wait there.
"""

from typing import Any

import torch


# The wrong rules as an attendee would write them: the package's own functions would be
# refused as calls (``refusals``), and the guide must show the counterexample they get.
def _count_rule(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    return (input_ids != pad_token_id).sum(-1) - 1


def _first_pad_wrapped(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    return ((input_ids == pad_token_id).int().argmax(-1) - 1) % input_ids.shape[-1]


def _last_non_pad(input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    positions = torch.arange(input_ids.shape[-1])
    return (positions * (input_ids != pad_token_id)).argmax(-1)


def _last_position(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    return torch.full((input_ids.shape[0],), input_ids.shape[-1] - 1)


def _causal_only(attention_mask: torch.Tensor) -> torch.Tensor:
    batch, length = attention_mask.shape
    return torch.ones(length, length, dtype=torch.bool).tril().expand(batch, length, length)


def _padding_only(attention_mask: torch.Tensor) -> torch.Tensor:
    length = attention_mask.shape[-1]
    return attention_mask.bool()[:, None, :].expand(-1, length, length)


# Why the reference answer is right, for the exercises whose answer in ``pp_demo.exercises.solutions``
# carries no comment saying so (the guide takes the comment where there is one).
WHY: dict[str, str] = {}

WRONG_ANSWERS: dict[str, list[tuple[Any, str | None, str]]] = {
    "01.1": [
        (
            _count_rule,
            "the count rule: `(input_ids != pad).sum(-1) - 1`",
            "the bug itself: it assumes every real token comes before the padding",
        ),
        (
            _first_pad_wrapped,
            "one before the first pad id, with the modulo",
            "trusts the first pad id to end the text: wrong once pad == eos puts one among the real tokens",
        ),
        (_last_position, "always the last position", "assumes there is never any right padding"),
    ],
    "01.2": [
        (
            ([5, 6, 7, 0, 0, 0], [1, 1, 1, 0, 0, 0]),
            None,
            "plain right padding: the first pad comes right after the text, so one before it is the last real token",
        ),
        (
            ([0, 0, 5, 6, 7, 8], [0, 0, 1, 1, 1, 1]),
            None,
            "mixes up the two rules: left padding breaks the count rule; here -1 wraps to the last position",
        ),
        (
            "right_pad_in_content",
            None,
            "copies the row the tables print instead of building one: the failing idea is a pad id before the "
            "last real token",
        ),
    ],
    "01.3": [
        (5, None, "expects the rule to find the last real token; the count rule counts, it never looks where"),
        (3, None, "counts the real tokens but forgets the minus one (or counts positions from 1)"),
    ],
    "10.1": [
        (4, None, "adds up both stages' idle slots"),
        (1, None, "counts a forward-only step: with backwards the pipe fills and drains twice"),
    ],
    "10.2": [
        (
            lambda m, p: p / (m + p - 1),
            "`p / (m + p - 1)`",
            "counts p idle slots per stage; each stage waits p - 1 slots in all (fill plus drain)",
        ),
        (
            lambda m, p: (p - 1) / m,
            "`(p - 1) / m`",
            "divides by the busy slots instead of the whole step of m + p - 1 slots",
        ),
    ],
    "02.1": [
        (
            "attention_mask",
            None,
            "forgets that the last stage's layers use the mask too, to keep padding out of attention",
        ),
        ("hidden", None, "thinks of the last stage as pooling only: its layers start from the hidden states"),
    ],
    "03.1": [
        ([False, True], None, "reads the verdict as belonging to the place in the batch, not to the row"),
    ],
    "03.2": [
        (
            [False, True],
            None,
            "thinks a single pad in front is harmless: any pad in front moves the count off the last token",
        ),
        ([True, True], None, "thinks the pull request's test batch passes; both rows are left-padded"),
    ],
    "03.3": [
        (
            [1, 3],
            None,
            "misses the right-padded row with a pad id inside the text (row 4): not only left padding breaks it",
        ),
        (
            [1, 2, 3, 4],
            None,
            "thinks any padding breaks the count rule; row 2 holds one real token first, so the count is right",
        ),
    ],
    "04.1": [
        ([2, 4], None, "confuses a pad id inside the text (harmless here) with a row that ends in a real eos"),
        ([0], None, "sees the all-real row ending in eos but not the right-padded one whose last real token is an eos"),
    ],
    "04.2": [
        (
            _last_non_pad,
            "the fix, `rightmost_non_pad`, written out",
            "still trusts the ids: a real eos equal to pad looks like padding",
        ),
        (
            lambda ids, mask, pad: mask.sum(-1) - 1,
            "`attention_mask.sum(-1) - 1`",
            "the count rule on the mask: right on right padding, wrong as soon as padding comes first",
        ),
    ],
    "04.3": [
        (4, None, "answers with rightmost_non_pad, which skips the trailing eos ids"),
        (5, None, "answers with the true last real token; first_pad_mod stops at the first pad id"),
        (7, None, "expects the -1 wrap; it happens only when the row starts with a pad id or has none"),
    ],
    "05.1": [
        ((2, 2), None, "assumes the count rule pools the last real token on a left-padded row"),
        ((1, 2), None, "gives the pair in the wrong order, or takes the label from the pooled token"),
    ],
    "05.2": [
        ([2, 3], None, "an off-by-one at the boundary: r = 4 pools position 3, still a pad"),
        (
            [2, 3, 4, 5, 6, 7],
            None,
            "thinks every left-padded row pools a pad; with many real tokens it pools a real, wrong one",
        ),
    ],
    "05.3": [
        ([7], None, "expects the logits to come from the last real token: the count rule pools position 4"),
        ([4], None, "forgets that attention mixes every earlier real token into the pooled position"),
        ([0, 1, 2, 3, 4], None, "forgets that the mask keeps the pads out of attention as keys"),
    ],
    "06.1": [
        ([1], None, "sees the pad id among the text but not the row padded on both sides, where -1 wraps onto a pad"),
        ([0, 2, 3], None, "mixes up the first-pad rule with the count rule: pure left padding is fine here"),
    ],
    "06.2": [
        ([0, 1], None, "expects causal attention: ColossalAI's mask under sdpa holds only the padding part"),
        ([0, 1, 2, 3, 4, 5], None, "forgets that the mask ColossalAI passes does hide the padding"),
    ],
    "06.3": [
        (_causal_only, "a lower triangle for every row", "keeps causality and forgets the padding"),
        (
            _padding_only,
            "the attention mask repeated for every position",
            "keeps the padding and forgets causality: ColossalAI's GPT-2 bug",
        ),
    ],
    "07.1": [
        ("d", None, "judges by the result on ordinary rows; only the row ending in a real eos tells c from d"),
        ("e", None, "class e reads packed lengths; the expression reads input_ids"),
    ],
    "07.2": [
        ("left", None, "picks a row where the two classes agree: they part only where a real token carries the pad id"),
        (([5, 6, 7, 8], [1, 1, 1, 1]), None, "a row without padding or pad ids: every class agrees there"),
    ],
    "08.1": [
        (
            [(0, 4), (1, 4), (2, 1), (3, 4)],
            None,
            "reads -1 within the row, as eager PyTorch (or the modulo) does; the legacy export flattens "
            "the batch, so row 0's -1 reaches the last row and row 3's reaches row 2",
        ),
        (
            [(3, 4), (3, 4), (0, 1), (3, 4)],
            None,
            "flattens the batch but forgets each row's offset b * L in the flat index",
        ),
    ],
    "08.2": [
        (["first_pad"], None, "forgets the all-pad row, where the count rule gives 0 - 1"),
        (
            ["count", "first_pad", "rightmost_non_pad"],
            None,
            "thinks the fix can go negative too; argmax returns a position and nothing is subtracted",
        ),
    ],
    # notebook 09 (maintainers' track); checked once its checkers are registered
    "09.1": [
        ([1, 3], None, "sees the pad id among the text but not a row that starts and ends with a pad (row 5)"),
        (
            [0, 1, 3, 5],
            None,
            "thinks any pad after the text is wrong; with nothing after the first pad, one before it is right",
        ),
    ],
    "09.2": [
        (
            {("llama", "left"), ("qwen2", "left"), ("opt", "left")},
            None,
            "copies the unpatched line of claim 2: qwen2's own file has the change",
        ),
        (
            {("llama", "left"), ("llama", "right"), ("opt", "left"), ("opt", "right")},
            None,
            "forgets that the old count is right on right padding",
        ),
        ({("qwen2", "left")}, None, "reads the question the other way round: qwen2 is the family with the change"),
    ],
}
