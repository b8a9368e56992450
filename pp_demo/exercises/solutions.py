"""Reference answers to the notebooks' exercises, keyed like ``pp_demo.exercises``.

They are here, not in the notebooks, so the stored notebooks keep their stubs and the
answers are tested (``tests/test_exercises.py``). Try the exercise before you look.
"""

import torch

__all__ = ["SOLUTIONS"]


def _forward_rule(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    # the first non-pad id from the right, via flip; 0 on an all-pad row, like model.forward
    from_right = (input_ids != pad_token_id).flip(-1).int().argmax(-1)
    return torch.where((input_ids != pad_token_id).any(-1), input_ids.shape[-1] - 1 - from_right, 0)


SOLUTIONS = {
    "01.1": _forward_rule,
    "01.2": ([5, 0, 6, 0, 0], [1, 1, 1, 0, 0]),  # a pad id among the real tokens stops it: pools 0, last real 2
    # (so does a real eos that carries the pad id: [5, 6, 0, 0] with mask [1, 1, 1, 0])
    "01.3": 2,  # three real tokens, minus one: position 2 is the last pad; the 5 is at 3, the 7 at 5
    "10.1": 2,  # 10 slots (m + 1 forward, m + 1 backward), 8 of them busy: one idle slot each way
    "10.2": lambda m, p: (p - 1) / (m + p - 1),  # p - 1 idle slots in a step of m + p - 1
    "02.1": "input_ids",  # only a pad-id rule reads them; the layers run on the hidden states
}


# ---- notebook 03
SOLUTIONS.update(
    {
        "03.1": [True, False],  # the verdict belongs to the row, not to its place in the batch
        "03.2": [False, False],  # any pad in front moves the count away from the last position
        "03.3": [1, 3, 4],  # count - 1 is right only when all real tokens come first, none equal to pad
    }
)


# ---- notebook 07
SOLUTIONS.update(
    {
        "07.1": "c",  # it agrees with rightmost_non_pad on every case, trailing eos included (it reads ids)
        "07.2": ([5, 6, 9, 9], [1, 1, 0, 0]),  # padded with an id other than the pad id: c pools 3, d pools 1
    }
)


# ---- notebook 04
def _true_last_rule(input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    # only the mask knows a trailing eos (id == pad id) is real: rightmost attended position
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device)
    return (positions * attention_mask.long()).argmax(-1)


SOLUTIONS.update(
    {
        "04.1": [0, 3],  # wrong exactly where the last real token is an eos sharing the pad id
        "04.2": _true_last_rule,
        "04.3": 1,  # the first pad id is the eos closing the prompt (position 2): one before it
    }
)


# ---- notebook 06
def _causal_padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    # position i sees j when j comes no later than i (causal) and j is a real token (padding)
    length = attention_mask.shape[-1]
    causal = torch.ones(length, length, dtype=torch.bool, device=attention_mask.device).tril()
    return causal & attention_mask.bool()[:, None, :]


SOLUTIONS.update(
    {
        "06.1": [1, 2],  # 1: a pad id among the text stops it early; 2: padded on both sides, the
        # first pad is in front, so the index wraps to the last position, a pad
        "06.2": [0, 1, 2, 3],  # every real token: the mask ColossalAI passes only hides padding
        "06.3": _causal_padding_mask,
    }
)


# ---- notebook 05
SOLUTIONS.update(
    {
        "05.1": (2, 1),  # last real token 14 -> 14 % 3 = 2; five real tokens: position 4, token 4 -> 1
        "05.2": [2, 3, 4],  # real tokens start at 8 - r, the count rule pools r - 1: a pad while 2r <= 8
        "05.3": [3, 4],  # the count rule pools position 4; it sees itself and the real token before it
    }
)


# ---- notebook 09
SOLUTIONS.update(
    {
        "09.1": [1, 3, 5],  # wrong when the first pad follows a real token and a real token follows it (3),
        # or when the row starts and ends with a pad (1, 5); 0, 2 and 4 are fine
        "09.2": {("llama", "left"), ("opt", "left")},  # each file its own count; wrong only where pads come first
    }
)


# ---- notebook 08
SOLUTIONS.update(
    {
        # flat index b * 5 + first_pad; -1 counts back from the end of the flattened batch
        "08.1": [(3, 4), (0, 4), (2, 1), (2, 4)],  # flat index b * L + first_pad; below 0 wraps to the batch end
        "08.2": ["count", "first_pad"],  # count on an all-pad row gives -1 too, not only first_pad
    }
)
