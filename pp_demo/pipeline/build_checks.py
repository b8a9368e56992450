"""What ``build_model`` is given, checked in one line each before a model is built.

A config class takes any keyword: a misspelt one (``num_hidden_layer=2``) is stored as an
attribute nobody reads, and the model is built with the default instead. And it takes values
no model can run with (``num_labels=0``, ``num_hidden_layers=-1``), which end later in a shape
error, or in a model without a layer. So the keys are checked against what the family's config
knows (its fields and their aliases), and the sizes against what a classifier needs.
"""

import difflib
from typing import Any

from pp_demo.bounds import count_value, seed_value
from pp_demo.errors import BadInput

__all__ = ["check_overrides", "check_heads", "check_built_config"]


def check_overrides(family: str, config_class: Any, overrides: dict[str, Any], seed: Any, num_labels: Any) -> None:
    """Every override a field of ``config_class``; the seed and the label count in range."""
    seed_value(seed, "seed")
    count_value(num_labels, "num_labels", 1)
    known = set(config_class().to_dict()) | set(getattr(config_class, "attribute_map", {})) | {"attn_implementation"}
    for key in overrides:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise BadInput(
                f"{config_class.__name__} has no field {key!r}{hint}: a {family} model is built from its known "
                "config fields only"
            )


def check_built_config(family: str, config: Any, head_dim_given: bool) -> None:
    """The sizes of the built config: at least one layer, two ids, one hidden unit, heads that
    split the hidden size (unless a head size is given); a pad id inside the vocabulary."""
    count_value(config.num_hidden_layers, f"num_hidden_layers of the {family} config", 1)
    count_value(config.vocab_size, f"vocab_size of the {family} config", 2)
    hidden = count_value(config.hidden_size, f"hidden_size of the {family} config", 1)
    heads = count_value(config.num_attention_heads, f"num_attention_heads of the {family} config", 1)
    if not head_dim_given and hidden % heads:
        _heads_refused(hidden, heads)
    pad = config.pad_token_id
    if pad is not None and (isinstance(pad, bool) or not isinstance(pad, int) or not 0 <= pad < config.vocab_size):
        raise BadInput(f"pad_token_id {pad!r} is outside the vocabulary (ids 0..{config.vocab_size - 1}), or None")


def check_heads(config_class: Any, kwargs: dict[str, Any]) -> None:
    """Heads that split the hidden size, before the config is built: transformers 5's configs
    refuse it themselves, in their own words, and 4.51.3's build it (``check_built_config``)."""
    names = getattr(config_class, "attribute_map", {})  # gpt2 and bloom spell them n_embd, n_head
    given = [kwargs.get(names.get(f, f), kwargs.get(f)) for f in ("hidden_size", "num_attention_heads")]
    sizes = [v for v in given if isinstance(v, int) and not isinstance(v, bool) and v > 0]  # hidden, heads
    if "head_dim" not in kwargs and len(sizes) == 2 and sizes[0] % sizes[1]:
        _heads_refused(*sizes)


def _heads_refused(hidden: int, heads: int) -> None:
    raise BadInput(f"hidden_size {hidden} does not split into {heads} attention heads: give a multiple of {heads}")
