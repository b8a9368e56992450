"""A tiny word-level tokenizer, built on the spot, whose pad token *is* its eos token.

Notebook 04 needs a real tokenizer to show where ``pad_token_id == eos_token_id`` puts pad
ids, and nothing can be downloaded here. So this one is built from a fixed word list with
the ``tokenizers`` library and wrapped in ``transformers.PreTrainedTokenizerFast``:

* ``<eos>`` has id 0, the pad id of the tiny models in ``pp_demo.core``, and the whole
  vocabulary stays under their 32 ids, so its output can go straight into those models;
* every text gets an ``<eos>`` appended (a pair becomes ``A <eos> B <eos>``), as many
  fine-tuning and reward-model recipes do;
* the pad token is set to the eos token, the common shortcut for models that ship
  without a pad token. From then on a real eos and a pad share one id, and only the
  attention mask tells them apart.

The ids are written out below, not learned, so the tokenizer is the same on every machine.
"""

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

from pp_demo.errors import BadInput

__all__ = ["EOS", "UNK", "VOCAB", "tiny_tokenizer"]

EOS, UNK = "<eos>", "<unk>"
# The vocabulary as a table, a few words per line (the formatter would put one word per line).
# fmt: off
_WORDS = (
    "the", "movie", "was", "great", "not", "good", "bad", "plot", "i", "loved", "it", "boring",
    "too", "long", "fun", "did", "you", "like", "yes", "no", "?", ".", ",",
)
# fmt: on
VOCAB = {EOS: 0, UNK: 1, **{word: i for i, word in enumerate(_WORDS, start=2)}}
"""Token -> id: ``<eos>`` 0 (also the pad), ``<unk>`` 1, then the words in the order above."""


def tiny_tokenizer(padding_side: str = "right") -> PreTrainedTokenizerFast:
    """The tokenizer, padding on ``padding_side`` (``"right"`` or ``"left"``), pad == eos == 0."""
    if padding_side not in ("left", "right"):
        raise BadInput(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    core = Tokenizer(models.WordLevel(VOCAB, unk_token=UNK))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.Whitespace()  # words, and punctuation as its own token
    core.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS}", pair=f"$A {EOS} $B {EOS}", special_tokens=[(EOS, VOCAB[EOS])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=EOS,  # the setting this workbook is about
        padding_side=padding_side,
        model_input_names=["input_ids", "attention_mask"],
    )
