"""The tiny tokenizer of notebook 04: pad == eos == 0, an eos after every text, fixed ids.

Every expected id and mask below is written by hand from the word list in
``pp_demo.workshop.tokenizer``: the <eos> 0, <unk> 1, the 2, movie 3, was 4, great 5, ... boring 13.
"""

import pytest

from pp_demo.core import FAMILIES, PAD
from pp_demo.workshop.tokenizer import VOCAB, tiny_tokenizer


def test_known_sentence_gets_known_ids_and_a_closing_eos():
    assert tiny_tokenizer()("the movie was great")["input_ids"] == [2, 3, 4, 5, 0]


def test_lowercases_and_maps_unknown_words_to_unk():
    assert tiny_tokenizer()("The movie was AWFUL")["input_ids"] == [2, 3, 4, 1, 0]


def test_a_pair_is_joined_with_an_eos_after_each_text():
    # did 17, you 18, like 19, it 12, ? 22 | yes 20
    assert tiny_tokenizer()("did you like it ?", "yes")["input_ids"] == [17, 18, 19, 12, 22, 0, 20, 0]


def test_pad_is_eos_and_matches_the_tiny_models_pad_id():
    tok = tiny_tokenizer()
    assert tok.pad_token == tok.eos_token == "<eos>"
    assert tok.pad_token_id == tok.eos_token_id == PAD == 0


def test_vocabulary_fits_the_tiny_models():
    assert len(tiny_tokenizer()) == len(VOCAB) < 32
    assert all(family.tiny["vocab_size"] == 32 for family in FAMILIES.values())


def test_right_padding():
    batch = tiny_tokenizer("right")(["the movie was great", "boring"], padding=True)
    assert batch["input_ids"] == [[2, 3, 4, 5, 0], [13, 0, 0, 0, 0]]
    assert batch["attention_mask"] == [[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]]


def test_left_padding():
    batch = tiny_tokenizer("left")(["the movie was great", "boring"], padding=True)
    assert batch["input_ids"] == [[2, 3, 4, 5, 0], [0, 0, 0, 13, 0]]
    assert batch["attention_mask"] == [[1, 1, 1, 1, 1], [0, 0, 0, 1, 1]]


def test_only_the_mask_tells_a_real_eos_from_padding():
    # "boring" <eos> <pad> <pad> <pad>: four zeros in the ids, one of them real
    batch = tiny_tokenizer()(["the movie was great", "boring"], padding=True)
    ids, mask = batch["input_ids"][1], batch["attention_mask"][1]
    assert [i for i, t in enumerate(ids) if t == 0] == [1, 2, 3, 4]
    assert [i for i, m in enumerate(mask) if m] == [0, 1]


def test_is_deterministic():
    texts = ["i loved it", "the plot was too long", "boring"]
    assert tiny_tokenizer()(texts, padding=True) == tiny_tokenizer()(texts, padding=True)


def test_returns_no_token_type_ids():
    assert set(tiny_tokenizer()("boring")) == {"input_ids", "attention_mask"}


def test_refuses_an_unknown_padding_side():
    with pytest.raises(ValueError, match="padding_side"):
        tiny_tokenizer("middle")
