"""Exercises of notebook 01 · the four padding rows (checked by ``pp_demo.exercises.check``)."""

import ast
import inspect
import random
import textwrap
from collections.abc import Callable

import torch

from pp_demo.core import CASES, PAD
from pp_demo.pooling.padding_table import row_text

from .core import (
    PACKAGE_RULES,
    answered,
    count_pools,
    first_pad_pools,
    forward_pools,
    outside_the_row,
    plain_int,
    positions_problem,
    register,
    row_answer,
    true_last,
    wrong_answer,
)


def _random_rows(count: int, length: int, seed: int) -> list[list[int]]:
    """Rows of one length, pad id 0 anywhere, each with a non-pad id (as 01.1 asks)."""
    pick = random.Random(seed)
    rows: list[list[int]] = []
    while len(rows) < count:
        row = [pick.choice((PAD, PAD, 5, 6, 7, 8, 9)) for _ in range(length)]
        if any(t != PAD for t in row):
            rows.append(row)
    return rows


_OTHER_PAD = 1  # a second pad id, under which 0 is an ordinary token: a rule fixed on `!= 0` is caught


def _batches_for_01_1() -> list[tuple[list[list[int]], str, int]]:
    """Multi-row batches (a rule that answers for row 0 only is caught), with their pad id: 0 as
    in the notebook, and another, so the rule must use the ``pad_token_id`` it is given."""
    six = [list(case.input_ids) for case in CASES.values() if case.length == 6 and any(case.input_ids)]
    randoms = [(_random_rows(5, n, seed), f"a random batch of length {n}", PAD) for seed, n in enumerate((3, 7, 9))]
    four = [list(CASES["trailing_eos"].input_ids)] * 2 + [[0, 0, 5, 0]]
    # the same padding with pad id 1, and the id 0 as real text (the 5s become 0s)
    swap = {PAD: _OTHER_PAD, 5: 0}
    other = [[swap.get(t, t) for t in row] for row in _random_rows(5, 7, seed=7)]
    return [
        (six, "the length-6 padding cases as one batch", PAD),
        (four, "a batch of length 4", PAD),
        *randoms,
        (other, f"a batch whose pad id is {_OTHER_PAD} (0 is a real token there)", _OTHER_PAD),
    ]


_READS_ARANGE = "reads positions off arange, as the expression printed above does"


def _names(tree: ast.AST) -> set[str | None]:
    return {node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None) for node in ast.walk(tree)}


def _copies_the_fix(rule: Callable[..., object]) -> str | None:
    """How the answer's code uses ``arange``, the expression notebook 01 prints (``multiplies by
    arange`` when an operand of a ``*`` calls it, as the printed fix does), or None. Its code, not
    its text: a comment or a string that mentions ``arange`` is no copy of the fix."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(rule)))
    except (OSError, TypeError):  # no source to read (a builtin, a rule made on the fly): judge it
        return None
    except SyntaxError:  # a lambda cut out of a longer line: fall back to its code object's names
        names = getattr(getattr(rule, "__code__", None), "co_names", ())
        return _READS_ARANGE if "arange" in names else None
    if "arange" not in _names(tree):
        return None
    # names bound to an arange (``positions = torch.arange(L)``) stand for it in a product
    aranges = {"arange"} | {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and "arange" in _names(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    products = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    if any(aranges & _names(side) for n in products for side in (n.left, n.right)):
        return "multiplies by arange, the expression printed above"
    return _READS_ARANGE


def _from_the_right(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    """The stub's given line: how far the last non-pad id is from the end of its row."""
    return (input_ids != pad_token_id).flip(-1).int().argmax(-1)


def _forward_rule(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    from_the_right = (input_ids != pad_token_id).flip(-1).int().argmax(-1)
    return input_ids.shape[-1] - 1 - from_the_right


@register(
    "01.1",
    "Fill in one expression: turn from_the_right, how far each row's last non-pad id is from the end "
    "of the row, into the position model.forward pools, one per row.",
    refuse=(*PACKAGE_RULES, f"{__name__}._forward_rule"),  # the reference answer, reachable as .solution
    solution=_forward_rule,
    why="the last position is length - 1; step back from it by from_the_right",
    wrong=(
        wrong_answer(_from_the_right, "a distance from the end read as a position", shown="`from_the_right` itself"),
        wrong_answer(
            lambda ids, pad: ids.shape[-1] - _from_the_right(ids, pad),
            "counts positions from 1: one too far",
            shown="`input_ids.shape[-1] - from_the_right`",
        ),
        wrong_answer(
            lambda ids, pad: (ids != pad).sum(-1) - 1,
            "the bug itself: it assumes every real token comes before the padding",
            shown="the count rule: `(input_ids != pad).sum(-1) - 1`",
        ),
    ),
)
def _judge_forward_rule(rule: object) -> str | None:
    if not callable(rule):
        return "the answer should be a function (input_ids, pad_token_id) -> positions"
    copied = _copies_the_fix(rule)
    if copied:
        return f"that {copied}: start from from_the_right instead"
    for rows, label, pad in _batches_for_01_1():
        got = answered(rule(torch.tensor(rows), pad))
        problem = positions_problem(got, len(rows), label)
        if problem is not None:
            return problem
        assert isinstance(got, torch.Tensor)  # positions_problem said otherwise
        for i, row in enumerate(rows):
            said, want = int(got[i]), forward_pools(row, pad)
            where = f"on row {i} {row_text(row)} of {label}"
            outside = outside_the_row(said, len(row))  # a position counts from the left: 0 to length - 1
            if outside is not None:
                return f"{where} your rule returns {outside} and model.forward pools {want}"
            if said != want:
                return f"{where} your rule pools {said}, model.forward pools {want}"
    return None


@register(
    "01.2",
    "Build a row of your own (input_ids, attention_mask), pad id 0, on which first_pad_mod "
    "pools somewhere other than the true last real token. A row printed in notebook 01 does not count.",
    solution=([5, 0, 6, 0, 0], [1, 1, 1, 0, 0]),
    why=(
        "a pad id among the real tokens stops it: pools 0, last real 2 (so does a real eos that carries the "
        "pad id: [5, 6, 0, 0] with mask [1, 1, 1, 0])"
    ),
    wrong=(
        wrong_answer(
            ([5, 6, 7, 0, 0, 0], [1, 1, 1, 0, 0, 0]),
            "plain right padding: the first pad comes right after the text, so one before it is the last real token",
        ),
        wrong_answer(
            ([0, 0, 5, 6, 7, 8], [0, 0, 1, 1, 1, 1]),
            "mixes up the two rules: left padding breaks the count rule; here -1 wraps to the last position",
        ),
        wrong_answer(
            "right_pad_in_content",
            "copies the row the tables print instead of building one: the failing idea is a pad id before the "
            "last real token",
        ),
    ),
)
def _judge_first_pad_row(answer: object) -> str | None:
    row = row_answer(answer)
    if isinstance(row, str):
        return row
    ids, mask, label = row
    odd = [i for i, (t, m) in enumerate(zip(ids, mask, strict=True)) if m == 0 and t != PAD]
    if odd:  # padding that is not the pad id would be a different question (notebook 07's)
        return (
            f"position {odd[0]} is padding (mask 0) but holds id {ids[odd[0]]}: in this exercise padding "
            "carries the pad id 0 (padding with another id, when a tokenizer and the model's config "
            "disagree on the pad id, is notebook 07's question)"
        )
    last = true_last(mask)
    if last is None:
        return f"on {label} the mask marks no real token: there is no true last real token to miss"
    lands_on = first_pad_pools(ids, PAD)
    if lands_on == last:
        # with no pad id in the row, argmax over all zeros answers 0 all the same
        first = ids.index(PAD) if PAD in ids else 0
        found = f"the first pad id is at {first}" if PAD in ids else "there is no pad id, so argmax gives 0"
        return f"on {label} {found}; one before it, {first - 1}, lands on {lands_on}: the true last real token"
    # right, but copied? notebook 01's tables print every case's row with its verdicts
    printed = next((c.name for c in CASES.values() if (list(c.input_ids), list(c.attention_mask)) == (ids, mask)), None)
    if printed:
        return f"{row_text(ids)} with mask {row_text(mask)} is the {printed} row printed above: build one of your own"
    return None


_PREDICT_ROW = (0, 5, 6, 0, 7, 8, 9, 0)  # padded on both sides, a pad id inside the text: no row printed above
# rows of the review table whose count-rule position notebook 01 prints, to test a way of
# counting on: each wrong try is sent to one of them, never to the arithmetic of the asked row
_SEEN = {
    name: f"the {name} row {row_text(CASES[name].input_ids)}, where the review table's count column says "
    f"{count_pools(CASES[name].input_ids, PAD)}"
    for name in ("left", "right", "right_pad_in_content")
}


@register(
    "01.3",
    "Which position does the count rule pool on [0, 5, 6, 0, 7, 8, 9, 0] (pad id 0)? Give an int.",
    solution=4,
    why=(
        "five non-pad ids (the pads around the text and inside it are not counted), minus one: position 4, "
        "the 7, a real token but not the last; model.forward pools the 9 at 6"
    ),
    wrong=(
        wrong_answer(6, "expects the rule to find the last real token; the count rule counts, it never looks where"),
        wrong_answer(5, "counts the non-pad ids but forgets the minus one (or counts positions from 1)"),
        wrong_answer(7, "counts every id, pads included, or takes the row's last position"),
    ),
    debrief=(
        "ask for the wrong first tries: 6 (model.forward's position, the 9: the count rule never looks for "
        "it), 5 (no minus one), 7 (every id counted). Five non-pad ids minus one is position 4, the 7: a real "
        "token, not the last. Where the pads sit, before, inside or after the text, changes where the text is, "
        "never the count: that is the whole bug"
    ),
)
def _judge_count_prediction(answer: object) -> str | None:
    position = plain_int(answer, "a position as an int")
    if isinstance(position, str):
        return position
    row = row_text(_PREDICT_ROW)
    if position == count_pools(_PREDICT_ROW, PAD):
        return None
    if position == -1:
        return f"-1 is one before the first pad id, another rule's idea; try your way on {_SEEN['left']}"
    if not 0 <= position < len(_PREDICT_ROW):
        return (
            f"{row} has positions 0 to {len(_PREDICT_ROW) - 1}, so {position} is none of them; "
            f"try your way of counting on {_SEEN['right']}: same number?"
        )
    if position == forward_pools(_PREDICT_ROW, PAD):
        return (
            f"{position} is where model.forward pools, the rightmost non-pad id, and the count rule does "
            f"not look for it: see {_SEEN['left']}"
        )
    if position == len(_PREDICT_ROW) - 1:
        return (
            f"{position} is the last position of {row}, a pad; the count rule counts non-pad ids: see "
            f"{_SEEN['right_pad_in_content']}"
        )
    if position == count_pools(_PREDICT_ROW, PAD, wrap=False) + 1:
        return (
            f"{position} is not what the count rule pools; try your way of counting on {_SEEN['right']}: same number?"
        )
    return (
        f"{position} is not what the count rule pools; try your way of counting on "
        f"{_SEEN['right_pad_in_content']}: same number?"
    )
