"""The model families as rows of one table: a tiny config, and the attribute names the
two-stage split needs. This is the only module that knows a family's attribute names. Each row
says, for one transformers ``*ForSequenceClassification`` class:

* ``body``: dotted path from the classifier to the module whose ``forward`` the stages reuse
  (``model``, ``transformer``, or OPT's ``model.decoder``); ``layers``: the ``ModuleList`` of
  decoder layers inside it;
* ``final``: modules applied after the last layer (final norm, OPT's ``project_out``), turned
  into identities in the first stage;
* ``zeroed`` / ``bypassed``: embedding-side modules that would run a second time in the last
  stage (it calls the same forward with ``inputs_embeds``): learned position embeddings must
  add zero, input-side norms and projections become identities;
* ``colossalai_rule``: the pooling rule ColossalAI's pipeline forward for it uses (0.5.0's, or
  the nightly's for qwen3), or ``None`` where ColossalAI has none. Which forwards the pull
  request changed is history, written as literals where it is used (``sdists.CHANGE_FILES``),
  never derived from this column: a row added here joins no ColossalAI list.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import transformers

from pp_demo.errors import BadInput
from pp_demo.pipeline.build_checks import check_built_config, check_heads, check_overrides
from pp_demo.pooling.cases import PAD
from pp_demo.pooling.rules import FIX

__all__ = ["Family", "FAMILIES", "get_family", "family_of", "rules_for", "build_model"]


@dataclass(frozen=True)
class Family:
    name: str
    classifier: str  # transformers class name
    config: str  # its config class name
    tiny: dict[str, Any] = field(repr=False)  # config keyword arguments of the tiny model
    body: str
    layers: str
    final: tuple[str, ...]
    zeroed: tuple[str, ...] = ()
    bypassed: tuple[str, ...] = ()
    colossalai_rule: str | None = None


# Tables, one row per line (the formatter would put one value per line).
# fmt: off
# Every tiny model: 4 decoder layers (so three split points), hidden size 16, 2 heads, pad id 0 as
# in the padding cases, 3 labels, no dropout anywhere: a training step is deterministic, the stages
# match model.forward exactly.
_LLAMA_LIKE = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=4, num_attention_heads=2,
                   num_key_value_heads=1, max_position_embeddings=64)
# Qwen configs carry a sliding window even when it is off, and warn about it on every build.
_NO_SLIDING = dict(_LLAMA_LIKE, use_sliding_window=False, sliding_window=None)
# GPT-2's and GPT-J's configs default to bos = eos = 50256, outside a 32-token vocabulary
# (transformers 5.x warns on every model built): 0 is the pad id, as pad == eos for them in
# practice. No classifier forward reads them.
_EOS_IN_VOCAB = {"bos_token_id": 0, "eos_token_id": 0}

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        Family("llama", "LlamaForSequenceClassification", "LlamaConfig", _LLAMA_LIKE,
               body="model", layers="layers", final=("norm",), colossalai_rule="count"),
        Family("qwen2", "Qwen2ForSequenceClassification", "Qwen2Config", _NO_SLIDING,
               body="model", layers="layers", final=("norm",), colossalai_rule="count"),
        Family("opt", "OPTForSequenceClassification", "OPTConfig",
               dict(vocab_size=32, hidden_size=16, ffn_dim=32, num_hidden_layers=4, num_attention_heads=2,
                    max_position_embeddings=64, word_embed_proj_dim=16, dropout=0.0, attention_dropout=0.0),
               body="model.decoder", layers="layers", final=("final_layer_norm", "project_out"),
               zeroed=("embed_positions",), bypassed=("project_in",), colossalai_rule="count"),
        # ColossalAI 0.5.0 has no Qwen3 forward; the one added after it takes the fix
        Family("qwen3", "Qwen3ForSequenceClassification", "Qwen3Config", dict(_NO_SLIDING, head_dim=8),
               body="model", layers="layers", final=("norm",), colossalai_rule="rightmost_non_pad"),
        Family("mistral", "MistralForSequenceClassification", "MistralConfig", _LLAMA_LIKE,
               body="model", layers="layers", final=("norm",), colossalai_rule="first_pad"),
        Family("gpt2", "GPT2ForSequenceClassification", "GPT2Config",
               dict(vocab_size=32, n_embd=16, n_layer=4, n_head=2, n_positions=64, **_EOS_IN_VOCAB,
                    embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0),
               body="transformer", layers="h", final=("ln_f",), zeroed=("wpe",), colossalai_rule="first_pad_mod"),
        Family("bloom", "BloomForSequenceClassification", "BloomConfig",
               dict(vocab_size=32, hidden_size=16, n_layer=4, n_head=2, hidden_dropout=0.0, attention_dropout=0.0),
               body="transformer", layers="h", final=("ln_f",), bypassed=("word_embeddings_layernorm",),
               colossalai_rule="first_pad_mod"),
        Family("falcon", "FalconForSequenceClassification", "FalconConfig",
               dict(vocab_size=32, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                    hidden_dropout=0.0, attention_dropout=0.0),
               body="transformer", layers="h", final=("ln_f",), colossalai_rule="first_pad_mod"),
        Family("gptj", "GPTJForSequenceClassification", "GPTJConfig",
               dict(vocab_size=32, n_embd=16, n_layer=4, n_head=2, rotary_dim=4, n_positions=64, **_EOS_IN_VOCAB,
                    embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0),
               body="transformer", layers="h", final=("ln_f",), colossalai_rule="first_pad_mod"),
    ]
}
# fmt: on


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise BadInput(f"unsupported family {name!r}; supported: {', '.join(FAMILIES)}") from None


def family_of(model: object) -> Family:
    """The family row of a model instance, found by its class."""
    for family in FAMILIES.values():
        if type(model).__name__ == family.classifier:
            return family
    raise BadInput(
        f"unsupported model class {type(model).__name__}; supported: "
        + ", ".join(f.classifier for f in FAMILIES.values())
    )


def rules_for(family: str, chosen: Sequence[str] | None = None) -> list[str]:
    """The rules a run of ``family`` compares: ``chosen`` when given, else the rule of its
    ColossalAI pipeline forward (where it has one), then the fix (once, where they are the same)."""
    colossalai = get_family(family).colossalai_rule
    default = [colossalai, FIX] if colossalai else [FIX]
    return list(dict.fromkeys(chosen or default))


def build_model(
    family: str, seed: int = 0, num_labels: int = 3, attn_implementation: str | None = None, **overrides: Any
) -> Any:  # a transformers *ForSequenceClassification
    """A tiny, seeded ``*ForSequenceClassification`` model in eval mode, built locally.

    Same seed, same family, same weights, on any machine: weights are drawn on the CPU.
    ``overrides`` change config fields (e.g. ``pad_token_id=None`` to see the error).
    """
    row = get_family(family)
    config_class = getattr(transformers, row.config)
    check_overrides(family, config_class, overrides, seed, num_labels)  # known fields only, sane values
    kwargs = {**row.tiny, "pad_token_id": PAD, "num_labels": num_labels, **overrides}
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    check_heads(config_class, kwargs)
    try:
        config = config_class(**kwargs)
    except Exception as error:  # the config's own checks (transformers 5: huggingface_hub's validation)
        raise BadInput(f"a {family} config with {overrides}: {str(error).splitlines()[0]}") from None
    check_built_config(family, config, head_dim_given="head_dim" in kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, row.classifier)(config)
    return model.eval()
