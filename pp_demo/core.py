"""The core of pp_demo, top to bottom: 1. the pooling rules, 2. the padding cases with their two
references, 3. the family table, 4. the stage split, 5. the in-process pipeline.

Inputs are checked once, where a public function is entered (``build_model``, ``split_model``,
``plan_run``, which ``pipeline_logits`` calls); inside, nothing checks them again. The ranks (``pp_demo.ranks``)
run these very stages from the same plan; ``pp_demo.pooling.positions`` is the rules' checked door.
"""

import copy
import difflib
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from operator import attrgetter
from typing import Any, cast

import torch
import transformers
from torch import nn

from pp_demo.bounds import count_value, seed_value
from pp_demo.errors import BadInput

# ================================================================ 1. pooling rules
# Each rule is the formula real code uses on (batch, length) tensors, one position per row, returned
# raw: -1 stays -1, as the code it models hands it to tensor indexing (where -1 is the last position).


def count_minus_one(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    """Non-pad ids minus one (ColossalAI 0.5.0: Llama, Qwen2, OPT): a count, so a position only
    when every non-pad id comes first. Wrong for left padding and for a pad id among real tokens."""
    return (input_ids != pad_token_id).sum(-1).long() - 1


def first_pad_minus_one(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    """Before the first pad id (ColossalAI 0.5.0: Mistral). With no pad or a pad first, argmax is 0
    and -1 wraps to the last position; a pad id among the real tokens (pad == eos) stops it early."""
    return (input_ids == pad_token_id).int().argmax(-1).long() - 1


def first_pad_minus_one_wrapped(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    """``first_pad_minus_one`` modulo the length (-1 becomes L - 1), kept for ONNX export: GPT-2,
    Bloom, Falcon and GPT-J in ColossalAI 0.5.0, transformers 4.48 and earlier."""
    return first_pad_minus_one(input_ids, pad_token_id) % input_ids.shape[-1]


def rightmost_non_pad(input_ids: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    """The fix (transformers >= 4.49): the rightmost non-pad id, right on either side and with pad
    ids among real tokens. Wrong when a row ends in a real eos equal to pad; 0 on an all-pad row."""
    positions = torch.arange(input_ids.shape[-1], device=input_ids.device)
    return (positions * (input_ids != pad_token_id)).argmax(-1)


def rightmost_attended(attention_mask: torch.Tensor) -> torch.Tensor:
    """The rightmost position the attention mask marks as real. It needs no pad id, so a real
    eos equal to pad at a row's end stays right. 0 on a row with no attended token."""
    positions = torch.arange(attention_mask.shape[-1], device=attention_mask.device)
    return (positions * attention_mask.long()).argmax(-1)


def attended_flip(attention_mask: torch.Tensor) -> torch.Tensor:
    """The same, from the right end (L - 1, not 0, on a row with no attended token)."""
    return attention_mask.shape[-1] - 1 - attention_mask.long().flip(-1).argmax(-1)


def attended_cumsum(attention_mask: torch.Tensor) -> torch.Tensor:
    """The same class as a running count: the count peaks at the last attended position, and
    argmax takes the first of a tie, so the pads after it do not move the answer."""
    return attention_mask.long().cumsum(-1).argmax(-1)


def known_lengths(cu_seqlens: torch.Tensor) -> torch.Tensor:
    """A packed batch's sequences end one before the next offset of ``[0, n0, n0 + n1, ...]``:
    nothing is read from the tokens, so no pad or eos id can mislead it (vLLM, SGLang poolers)."""
    return cu_seqlens[1:].long() - 1


@dataclass(frozen=True)
class Rule:
    """A pooling rule under its short name, with the inputs it reads and where it is used."""

    name: str
    fn: Callable[..., torch.Tensor]
    needs: tuple[str, ...]
    used_by: str

    def __call__(self, **inputs: Any) -> torch.Tensor:
        """The positions, from inputs already checked (``pooled_positions`` checks them)."""
        if "pad_token_id" in self.needs and inputs.get("pad_token_id") is None:
            return _no_pad_id(inputs["input_ids"])
        return self.fn(**{key: inputs.get(key) for key in self.needs})


def _no_pad_id(input_ids: torch.Tensor) -> torch.Tensor:
    """What transformers does when the config has no pad token: batch 1 pools the last
    position, a larger batch is an error (rows could differ in length, nothing tells how)."""
    if input_ids.shape[0] != 1:
        raise BadInput(
            f"pad_token_id is None and the batch has {input_ids.shape[0]} rows: without a pad id "
            "the last real token of each row cannot be found (set config.pad_token_id)"
        )
    return torch.full((1,), input_ids.shape[1] - 1, dtype=torch.long, device=input_ids.device)


_IDS = ("input_ids", "pad_token_id")
_MASK = ("attention_mask",)
# fmt: off
RULES: dict[str, Rule] = {rule.name: rule for rule in [
    Rule("count", count_minus_one, _IDS, "ColossalAI 0.5.0 llama, qwen2, opt"),
    Rule("first_pad_mod", first_pad_minus_one_wrapped, _IDS,
         "ColossalAI 0.5.0 gpt2, bloom, falcon, gptj; transformers <= 4.48"),
    Rule("first_pad", first_pad_minus_one, _IDS, "ColossalAI 0.5.0 mistral"),
    Rule("rightmost_non_pad", rightmost_non_pad, _IDS, "the fix: transformers >= 4.49, ColossalAI qwen3 (after 0.5.0)"),
    Rule("rightmost_attended", rightmost_attended, _MASK, "attention mask; none of the pipeline forwards"),
    Rule("attended_flip", attended_flip, _MASK, "attention mask, flipped: the same class as rightmost_attended"),
    Rule("attended_cumsum", attended_cumsum, _MASK,
         "attention mask, running count: the same class as rightmost_attended"),
    Rule("known_lengths", known_lengths, ("cu_seqlens",),
         "packed batches: NeMo-Aligner reward model; vLLM, SGLang, TEI poolers"),
]}
# fmt: on

FIX = "rightmost_non_pad"
"""The rule ``model.forward`` uses in transformers 4.51.3 and 5.x: the reference of exactness."""

CORE_RULES = ("count", "first_pad_mod", "first_pad", "rightmost_non_pad", "rightmost_attended")
"""The review table's five: the three pipeline-forward rules, the fix, the attention mask."""


def get_rule(name: "str | Rule") -> Rule:
    """The rule registered under ``name``; an unknown name is refused with the known ones."""
    if isinstance(name, Rule):
        return name
    try:
        return RULES[name]
    except (KeyError, TypeError):
        raise BadInput(f"unknown pooling rule {name!r}; known rules: {', '.join(RULES)}") from None


# ================================================================ 2. padding cases
# One row of ids (pad id 0) with its mask and two answers never to be confused: ``true_last``, the
# last real token by the mask (what a classifier *should* pool; None on the all-pad row), and
# ``forward_pools``, the position model.forward pools in transformers 4.51.3 and 5.x (the
# rightmost non-pad id: what a pipeline must *reproduce*). They differ on trailing_eos and all_pad.

PAD = 0
"""The pad id of every case (and of the tiny model configs)."""


@dataclass(frozen=True)
class PaddingCase:
    name: str
    input_ids: tuple[int, ...]
    attention_mask: tuple[int, ...]
    true_last: int | None
    forward_pools: int
    about: str

    @property
    def length(self) -> int:
        return len(self.input_ids)

    def tensors(self, device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """``(input_ids, attention_mask)`` as ``(1, L)`` long tensors."""
        return as_batch([self], device)


# fmt: off
CASES: dict[str, PaddingCase] = {case.name: case for case in [
    PaddingCase("left", (0, 0, 5, 6, 7, 8), (0, 0, 1, 1, 1, 1), 5, 5,
                "left-padded: pads first, as for batched generation"),
    PaddingCase("right", (5, 6, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), 3, 3,
                "right-padded: pads last, the usual training layout"),
    PaddingCase("left_pad_in_content", (0, 0, 5, 0, 7, 8), (0, 0, 1, 1, 1, 1), 5, 5,
                "left-padded, with a real token equal to the pad id (pad == eos)"),
    PaddingCase("right_pad_in_content", (5, 0, 7, 8, 0, 0), (1, 1, 1, 1, 0, 0), 3, 3,
                "right-padded, with a real token equal to the pad id (pad == eos)"),
    PaddingCase("unpadded", (5, 6, 7, 8, 9, 10), (1, 1, 1, 1, 1, 1), 5, 5, "no padding at all"),
    PaddingCase("all_pad", (0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0), None, 0,
                "no real token: nothing is right; model.forward pools position 0"),
    PaddingCase("trailing_eos", (5, 6, 7, 0), (1, 1, 1, 1), 3, 2,
                "ends in a real eos equal to pad: only the mask knows it is real"),
]}
# fmt: on

REVIEW_TABLE = ("left", "right", "left_pad_in_content", "right_pad_in_content")
"""The four rows of the pull request's review table, in its order."""


def get_case(name: str) -> PaddingCase:
    try:
        return CASES[name]
    except KeyError:
        raise BadInput(f"unknown padding case {name!r}; known cases: {', '.join(CASES)}") from None


def as_batch(
    cases: Iterable[str | PaddingCase], device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack cases of one length into ``(input_ids, attention_mask)`` long tensors."""
    resolved = [get_case(c) if isinstance(c, str) else c for c in cases]
    lengths = {c.length for c in resolved}
    if len(lengths) != 1:
        raise BadInput(f"cases of different lengths {sorted(lengths)} cannot share a batch")
    ids = torch.tensor([c.input_ids for c in resolved], dtype=torch.long, device=device)
    mask = torch.tensor([c.attention_mask for c in resolved], dtype=torch.long, device=device)
    return ids, mask


# ================================================================ 3. the family table
# One row per transformers ``*ForSequenceClassification``: a tiny config and the names the split needs.
# ``body``: the module whose forward the stages reuse; ``layers``: its decoder layers; ``final``: what
# runs after them (identities before the last stage); ``zeroed`` / ``bypassed``: embedding-side modules
# a later stage's forward would run again: positions add zero there, input norms become identities;
# ``colossalai_rule``: the rule of ColossalAI's pipeline forward (0.5.0; the nightly's for qwen3).


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


# Every tiny model: 4 decoder layers (three split points), hidden size 16, 2 heads, pad id 0 as in
# the cases, 3 labels, no dropout: a training step is deterministic, the stages match model.forward
# exactly. Qwen configs carry a sliding window even when off, and warn on every build without this.
_LLAMA_LIKE = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=4, num_attention_heads=2,
                   num_key_value_heads=1, max_position_embeddings=64)  # fmt: skip
_NO_SLIDING = dict(_LLAMA_LIKE, use_sliding_window=False, sliding_window=None)
# GPT-2's and GPT-J's configs default to bos = eos = 50256, outside a 32-token vocabulary (5.x warns
# on every build): 0, as pad == eos for them in practice. No classifier forward reads them.
_EOS_IN_VOCAB = {"bos_token_id": 0, "eos_token_id": 0}

# fmt: off
FAMILIES: dict[str, Family] = {f.name: f for f in [
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
]}
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
    supported = ", ".join(f.classifier for f in FAMILIES.values())
    raise BadInput(f"unsupported model class {type(model).__name__}; supported: {supported}")


def build_model(
    family: str, seed: int = 0, num_labels: int = 3, attn_implementation: str | None = None, **overrides: Any
) -> Any:  # a transformers *ForSequenceClassification
    """A tiny, seeded classifier in eval mode, built locally: same seed, same weights on any machine
    (drawn on the CPU). ``overrides`` change config fields (``pad_token_id=None`` to see the error)."""
    row = get_family(family)
    config_class = getattr(transformers, row.config)
    _check_overrides(family, config_class, overrides, seed, num_labels)
    kwargs = {**row.tiny, "pad_token_id": PAD, "num_labels": num_labels, **overrides}
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    _check_heads(config_class, kwargs)
    try:
        config = config_class(**kwargs)
    except Exception as error:  # the config's own checks (transformers 5: huggingface_hub's validation)
        raise BadInput(f"a {family} config with {overrides}: {str(error).splitlines()[0]}") from None
    _check_built_config(family, config, head_dim_given="head_dim" in kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, row.classifier)(config)
    return model.eval()


_HEADS_REFUSED = "hidden_size {} does not split into {} attention heads: give a multiple of {}"
# A config class takes any keyword: a misspelt one (num_hidden_layer=2) is stored where nobody reads it,
# and values no model runs with (num_labels=0) end later in a shape error: so keys and sizes are checked.


def _check_overrides(family: str, config_class: Any, overrides: dict[str, Any], seed: Any, num_labels: Any) -> None:
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


def _check_heads(config_class: Any, kwargs: dict[str, Any]) -> None:
    """Heads that split the hidden size, before transformers 5's config refuses it in its own words."""
    names = getattr(config_class, "attribute_map", {})  # gpt2 and bloom spell them n_embd, n_head
    given = [kwargs.get(names.get(f, f), kwargs.get(f)) for f in ("hidden_size", "num_attention_heads")]
    sizes = [v for v in given if isinstance(v, int) and not isinstance(v, bool) and v > 0]  # hidden, heads
    if "head_dim" not in kwargs and len(sizes) == 2 and sizes[0] % sizes[1]:
        raise BadInput(_HEADS_REFUSED.format(*sizes, sizes[1]))


def _check_built_config(family: str, config: Any, head_dim_given: bool) -> None:
    count_value(config.num_hidden_layers, f"num_hidden_layers of the {family} config", 1)
    count_value(config.vocab_size, f"vocab_size of the {family} config", 2)
    hidden = count_value(config.hidden_size, f"hidden_size of the {family} config", 1)
    heads = count_value(config.num_attention_heads, f"num_attention_heads of the {family} config", 1)
    if not head_dim_given and hidden % heads:
        raise BadInput(_HEADS_REFUSED.format(hidden, heads, heads))
    check_pad_id(config.pad_token_id, config.vocab_size)


def check_pad_id(pad: Any, vocab: int) -> None:
    """A pad id inside the vocabulary, or None: the embedding would assert on any other."""
    if pad is not None and (isinstance(pad, bool) or not isinstance(pad, int) or not 0 <= pad < vocab):
        raise BadInput(f"pad_token_id {pad!r} is outside the vocabulary (ids 0..{vocab - 1}), or None")


# ================================================================ 4. the stage split
# The stages reuse the model's own modules and body forward (the body copied once per stage, each
# copy pruned): no family's forward is rewritten, so transformers itself computes positions, masks,
# rotary or alibi terms. Parameters are shared with the model: a training step through the stages
# trains the model itself.
#
#     first stage:   (input_ids, attention_mask)         embeddings + layers[:p1]                -> hidden
#     middle stage:  (hidden, input_ids, attention_mask) layers[p1:p2]                           -> hidden
#     last stage:    (hidden, input_ids, attention_mask) layers[pk:] + final norm + pool + score -> logits
#
# Only the hidden states travel between stages; every stage gets the micro-batch's ids and mask from
# the schedule itself, as ColossalAI's schedule hands every stage the whole micro-batch (the body needs
# the mask, the last stage pools from both; no engine is asked for the gradient of an integer tensor).


def _last_hidden(output: Any) -> torch.Tensor:
    return cast(torch.Tensor, output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0])


class _Stage(nn.Module):
    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body  # a pruned copy of the model's body, its parameters the model's own


class FirstStage(_Stage):
    """Embeddings and the first decoder layers; no final norm."""

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return _last_hidden(self.body(input_ids=input_ids, attention_mask=attention_mask, use_cache=False))


class MiddleStage(_Stage):
    """Decoder layers between two split points."""

    def forward(self, hidden: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return _last_hidden(self.body(inputs_embeds=hidden, attention_mask=attention_mask, use_cache=False))


class LastStage(_Stage):
    """The remaining layers, the final norm, the pooling rule and the score head."""

    def __init__(self, body: nn.Module, score: nn.Module, rule: Rule, pad_token_id: int | None) -> None:
        super().__init__(body)
        self.score = score
        self.rule = rule
        self.pad_token_id = pad_token_id

    def forward(self, hidden: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = _last_hidden(self.body(inputs_embeds=hidden, attention_mask=attention_mask, use_cache=False))
        positions = self.rule(input_ids=input_ids, pad_token_id=self.pad_token_id, attention_mask=attention_mask)
        # pool first, then score: the head is a per-position linear map, so scoring one position
        # per row gives the same logits as scoring all and indexing afterwards
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), positions]
        return cast(torch.Tensor, self.score(pooled))


class _Zero(nn.Module):
    """Learned position embeddings after the first stage: added there, they must add zero here."""

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(())


@dataclass(frozen=True)
class Stages:
    """The stages in pipeline order, with where the model was cut."""

    modules: tuple[nn.Module, ...]
    split_points: tuple[int, ...]
    num_layers: int
    family: str

    @property
    def first(self) -> FirstStage:
        return cast(FirstStage, self.modules[0])

    @property
    def last(self) -> LastStage:
        return cast(LastStage, self.modules[-1])

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[nn.Module]:
        return iter(self.modules)

    def __getitem__(self, stage_index: int) -> nn.Module:
        return self.modules[stage_index]

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Every stage in order, each given the ids and mask: what the ranks compute together."""
        hidden = self.first(input_ids, attention_mask)
        for stage in self.modules[1:]:
            hidden = stage(hidden, input_ids, attention_mask)
        return cast(torch.Tensor, hidden)  # the last stage's logits


def split_model(
    model: nn.Module, split_points: int | tuple[int, ...] | list[int] | None = None, rule: "str | Rule" = FIX
) -> Stages:
    """``len(split_points) + 1`` stages, stage i holding layers ``[points[i-1], points[i])`` (default:
    half the layers, two stages); ``rule``: the last stage's pooling rule."""
    family, found = family_of(model), get_rule(rule)
    points = check_split_points(split_points, count_layers(model, family))
    return _split(model, family, points, found)


def _split(model: nn.Module, family: Family, points: tuple[int, ...], rule: Rule) -> Stages:
    body = attrgetter(family.body)(model)
    layers = list(getattr(body, family.layers))
    score = cast(nn.Module, model.score)  # every *ForSequenceClassification head is `score`
    pad_token_id = cast("int | None", getattr(model.config, "pad_token_id", None))
    modules: list[nn.Module] = []
    for i, (start, stop) in enumerate(pairwise([0, *points, len(layers)])):
        first, last = i == 0, i == len(points)
        pruned = _prune(body, family, layers[start:stop], first, last)
        if first:
            modules.append(FirstStage(pruned))
        elif last:
            modules.append(LastStage(pruned, score, rule, pad_token_id))
        else:
            modules.append(MiddleStage(pruned))
    return Stages(tuple(modules), points, len(layers), family.name)


def _prune(body: nn.Module, family: Family, layers: list[nn.Module], first: bool, last: bool) -> nn.Module:
    """A copy of the body holding ``layers``: what runs before them only first, after them only last."""
    # deepcopy the module tree but map every parameter and buffer to itself
    copy_ = copy.deepcopy(body, {id(t): t for t in [*body.parameters(), *body.buffers()]})
    setattr(copy_, family.layers, nn.ModuleList(layers))
    for name in (() if last else family.final) + (() if first else family.bypassed):
        if getattr(copy_, name, None) is not None:
            setattr(copy_, name, nn.Identity())
    for name in () if first else family.zeroed:
        setattr(copy_, name, _Zero())
    return copy_


def count_layers(model: nn.Module, family: Family | None = None) -> int:
    """The number of decoder layers of a supported model (an unsupported one is refused); ``family``: its row."""
    family = family or family_of(model)
    return len(getattr(attrgetter(family.body)(model), family.layers))


def check_split_points(split_points: int | tuple[int, ...] | list[int] | None, num_layers: int) -> tuple[int, ...]:
    """The split points as a tuple: ``None`` is half the layers, an int one point (two stages)."""
    if num_layers < 2:
        raise BadInput(
            f"a model with {num_layers} layer(s) cannot be split into stages: each stage holds at least one "
            "layer, so a pipeline needs a model of 2 layers or more (num_hidden_layers=2)"
        )
    if split_points is None:
        return (num_layers // 2,)
    points = (split_points,) if isinstance(split_points, int) and not isinstance(split_points, bool) else split_points
    valid = (
        isinstance(points, (tuple, list))
        and len(points) > 0
        and all(isinstance(p, int) and not isinstance(p, bool) and 0 < p < num_layers for p in points)
        and all(a < b for a, b in pairwise(points))
    )
    if not valid:
        raise BadInput(
            f"split points must be strictly increasing ints in 1..{num_layers - 1} for a model with "
            f"{num_layers} layers (each stage holds at least one layer), got {split_points!r}"
        )
    return tuple(points)  # type: ignore[arg-type]  # checked above: a tuple or list of ints


# ================================================================ 5. the in-process pipeline


@dataclass(frozen=True, eq=False)
class Plan:
    """A pipeline run checked once (``plan_run``): what the loop below and the ranks take, unchecked."""

    model: nn.Module
    family: Family
    rule: Rule
    split_points: tuple[int, ...]
    rows: tuple[slice, ...]  # each micro-batch's


def plan_run(
    model: nn.Module, input_ids: Any, attention_mask: Any, rule: "str | Rule", split_points: Any, n_micro: Any
) -> Plan:
    """Each check of a run, once: the rule, the model's family, the split points, the batch, the micro-batches."""
    found, family = get_rule(rule), family_of(model)
    points = check_split_points(split_points, count_layers(model, family))
    check_batch(model, input_ids, attention_mask)
    return Plan(model, family, found, points, tuple(micro_batches(input_ids.shape[0], n_micro)))


def pipeline_logits(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    rule: "str | Rule" = FIX,
    split_points: int | tuple[int, ...] | None = None,
    n_micro: int = 1,
) -> torch.Tensor:
    """The pipeline in this process: ``n_micro`` micro-batches, each through every stage in order;
    the logits on the model's device. No mask: every token is real. The ranks run the same stages."""
    if attention_mask is None and isinstance(input_ids, torch.Tensor):
        attention_mask = torch.ones_like(input_ids)
    plan = plan_run(model, input_ids, attention_mask, rule, split_points, n_micro)
    return run_micro_batches(stages_for(plan), input_ids, attention_mask, plan.rows)


def run_micro_batches(
    stages: Stages, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows: Iterable[slice]
) -> torch.Tensor:
    """Each micro-batch (a slice of rows) through every stage, without gradients: a schedule's loop."""
    for stage in stages:
        stage.train(False)  # each stage holds copies of the body: set its mode
    device = next(stages.first.parameters()).device
    ids, mask = input_ids.to(device), attention_mask.to(device)
    with torch.no_grad():
        return torch.cat([stages.logits(ids[r], mask[r]) for r in rows])


def micro_batches(batch_size: int, count: int) -> list[slice]:
    """Row slices of ``count`` equal micro-batches; a clear error when they can't be equal."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(f"the micro-batch count must be a positive int, got {count!r}")
    if batch_size % count:
        raise BadInput(f"a batch of {batch_size} rows cannot be split into {count} equal micro-batches")
    size = batch_size // count
    return [slice(i * size, (i + 1) * size) for i in range(count)]


def check_batch(model: Any, input_ids: Any, attention_mask: Any) -> None:
    """Weights with values; 2-D integer ids in the vocabulary; a 0/1 mask of their shape and device.
    The values come back from the device in one read: at real size on a GPU each read is a wait."""
    meta = [name for name, p in model.named_parameters() if p.is_meta]
    if meta:
        raise BadInput(
            f"the model's weights are on the meta device ({meta[0]}{' and more' if len(meta) > 1 else ''}): "
            "load or materialise them first (model.to_empty(device='cpu') and load_state_dict)"
        )
    ids = integer_tensor(input_ids, "input_ids", 2)
    if ids.numel() == 0:
        raise BadInput(f"input_ids has no token (shape {tuple(ids.shape)}): a batch needs rows of at least one id")
    if isinstance(attention_mask, torch.Tensor) and attention_mask.is_meta:
        raise BadInput("attention_mask is on the meta device (a shape without values): give it on cpu or a GPU")
    if attention_mask is None:
        raise BadInput(
            "each job needs an attention_mask of the shape of its input_ids "
            "(the schedule cuts a tensor into micro-batches, never None)"
        )
    if not isinstance(attention_mask, torch.Tensor) or attention_mask.shape != ids.shape:
        shown = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else None
        got = str(shown) if shown is not None else f"a {type(attention_mask).__name__}"
        raise BadInput(f"each job needs an attention_mask of the shape of its input_ids {tuple(ids.shape)}, got {got}")
    if ids.device != attention_mask.device:
        devices = ", ".join(sorted({str(ids.device), str(attention_mask.device)}))
        raise BadInput(f"the ids, mask and labels of a batch must be on one device, got {devices}")
    mask_ok = ((attention_mask == 0) | (attention_mask == 1)).all()
    low, high, mask_ok = torch.stack([ids.min(), ids.max(), mask_ok.long()]).tolist()
    vocab = int(model.config.vocab_size)
    if low < 0 or high >= vocab:
        raise BadInput(f"input_ids must lie in 0..{vocab - 1} (the vocabulary), got ids from {low} to {high}")
    if not mask_ok:
        raise BadInput("the attention_mask holds only 0 (padding) and 1 (real token)")


def integer_tensor(value: Any, name: str, dims: int) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise BadInput(f"{name} must be a torch.Tensor, got {type(value).__name__} (wrap it: torch.tensor(...))")
    if value.dim() != dims:
        hint = " (one row: ids[None])" if name == "input_ids" and value.dim() == 1 else ""
        raise BadInput(f"{name} must be {dims}-D, got shape {tuple(value.shape)}{hint}")
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise BadInput(f"{name} must hold integers (torch.long), got {value.dtype}")
    if value.is_meta:
        raise BadInput(f"{name} is on the meta device (a shape without values): give it on cpu or a GPU")
    return value


# A model is split once: copying the body's module tree per stage costs more than the stages' compute
# at real size on a GPU. Its stages are kept (weakly, they go with it) while it is what they were built
# from: the same modules, parameters, buffers (a .to() replaces them) and hooks, the same config.
_KEPT: "weakref.WeakKeyDictionary[nn.Module, dict[Any, Any]]" = weakref.WeakKeyDictionary()


def stages_for(plan: Plan) -> Stages:
    """The stages of the plan's model, cut at its split points with its rule: split once."""
    model, key = plan.model, (plan.split_points, plan.rule)
    built_from = (_built_from(model), repr(getattr(model, "config", None)))
    kept = _KEPT.setdefault(model, {})
    if kept.get("built from") != built_from:
        kept.clear()
        kept["built from"] = built_from
    if key not in kept:
        kept[key] = _split(model, plan.family, plan.split_points, plan.rule)
    return cast(Stages, kept[key])


def _built_from(model: nn.Module) -> tuple[int, ...]:
    """The identities of every module, parameter, buffer and forward hook (the copies keep the hooks)."""
    modules = list(model.modules())
    hooks = [h for m in modules for h in (*m._forward_hooks.values(), *m._forward_pre_hooks.values())]
    return tuple(map(id, [*modules, *model.parameters(), *model.buffers(), *hooks]))
