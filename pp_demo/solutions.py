"""Reference answers to the notebooks' exercises, keyed like ``pp_demo.exercises``.

They are here, not in the notebooks, so the stored notebooks keep their stubs and the
answers are tested (``tests/test_exercises.py``). Try the exercise before you look.
"""

import torch

__all__ = ["SOLUTIONS"]


def _forward_rule(input_ids, pad_token_id):
    # rightmost position whose id is not the pad id; 0 on an all-pad row, like model.forward
    positions = torch.arange(input_ids.shape[-1], device=input_ids.device)
    return (positions * (input_ids != pad_token_id)).argmax(-1)


SOLUTIONS = {
    "01.1": _forward_rule,
    "01.2": "right_pad_in_content",
    "01.3": 2,  # three real tokens, minus one: position 2 holds the 5, not the last token 7
}
