"""Exercises of notebook 01 · the four padding rows (checked by ``pp_demo.exercises.check``)."""

import torch

from ..cases import CASES, PAD, REVIEW_TABLE
from ..rules import count_minus_one
from .core import NotAttempted, _is_stub, ids_text, register


@register("01.1", "Write a rule from input_ids and pad_token_id that pools where model.forward "
                  "pools on every padding case.")
def _judge_forward_rule(rule):
    if not callable(rule):
        return "the answer should be a function (input_ids, pad_token_id) -> positions"
    for case in CASES.values():
        ids, _ = case.tensors()
        got = rule(ids, PAD)
        if _is_stub(got):
            raise NotAttempted
        if not isinstance(got, torch.Tensor) or got.shape != (1,):
            return f"on {case.name} {ids_text(case)} it returned {got!r}, not one position per row"
        lands_on = int(got[0]) % case.length
        if lands_on != case.forward_pools:
            return (f"on {case.name} {ids_text(case)} your rule pools {lands_on}, "
                    f"model.forward pools {case.forward_pools}")
    return None


@register("01.2", "Name the one row of the review table where the first-pad rule (with the "
                  "modulo) pools the wrong token.")
def _judge_first_pad_row(name):
    if name not in REVIEW_TABLE:
        return f"{name!r} is not one of the review table's rows: {', '.join(REVIEW_TABLE)}"
    if name != "right_pad_in_content":
        case = CASES[name]
        return f"on {name} {ids_text(case)} first_pad_mod pools {case.true_last}, the true last real token"
    return None


@register("01.3", "Which position does the count rule pool on [0, 0, 0, 5, 6, 7] (pad 0)? "
                  "Give an int.")
def _judge_count_prediction(position):
    row = torch.tensor([[0, 0, 0, 5, 6, 7]])
    expected = int(count_minus_one(row, PAD)[0])
    if not isinstance(position, int):
        return f"give a position as an int, not {type(position).__name__}"
    if position != expected:
        hint = " (that is the true last real token; the count rule counts, it does not look)" if position == 5 else ""
        return f"{position} is not what the count rule pools{hint}"
    return None
