"""The bug class across projects, as data: five ways to find the last real token.

Notebook 07 renders its comparison table from here rather than from a markdown cell, so the
table is tested (``tests/pooling/test_survey.py``) and cannot drift from the rules it names.
The facts come from ``shared/SURVEY.md`` (projects' public sources and issue threads, read
in November 2026), in the workbook's words.
"""

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import zip_longest

from pp_demo.pooling.failure import SENTENCES, claims_about, wrong_when

__all__ = [
    "PROJECTOR_WIDTH",
    "RuleClass",
    "CLASSES",
    "RULE_CLASS",
    "SurveyRow",
    "SURVEY",
    "NO_RULE_OF_THEIR_OWN",
    "projects_with_a_rule",
    "Incident",
    "INCIDENTS",
    "format_classes",
    "format_survey",
    "format_incidents",
]


@dataclass(frozen=True)
class RuleClass:
    """One way of finding the pooled token, with the registered rules that implement it."""

    letter: str
    summary: str
    rule: str  # the canonical registered rule
    spellings: tuple[str, ...] = ()  # other registered rules of the same class

    @property
    def rules(self) -> tuple[str, ...]:
        return (self.rule, *self.spellings)


# fmt: off
CLASSES: dict[str, RuleClass] = {
    c.letter: c
    for c in [
        RuleClass("a", "count minus one: the number of non-pad tokens, minus one", "count"),
        RuleClass("b", "first pad minus one: the token before the first pad id", "first_pad_mod", ("first_pad",)),
        RuleClass("c", "rightmost non-pad id: the last position whose id is not the pad id", "rightmost_non_pad"),
        RuleClass("d", "rightmost attended position: the last position the attention mask marks real",
                  "rightmost_attended", ("attended_flip", "attended_cumsum")),
        RuleClass("e",
                  "lengths known: the batch says where each sequence ends (cumulative lengths); nothing is inferred",
                  "known_lengths"),
    ]
}
# fmt: on

RULE_CLASS: dict[str, str] = {name: c.letter for c in CLASSES.values() for name in c.rules}
"""Registered rule name -> class letter (``tests/pooling/test_survey.py`` checks it covers ``RULES``)."""


@dataclass(frozen=True)
class SurveyRow:
    """Where one project computes the pooled position, and under which assumption."""

    project: str
    repository: str  # owner/name on GitHub
    path: str  # the file (or folder) that computes the position
    rule_class: str  # a letter of CLASSES
    padding: str  # the padding it assumes, what pad == eos does to it
    citations: tuple[str, ...] = ()  # issue and PR numbers in that repository


# A table, a row or two per entry (the formatter would put one value per line).
# fmt: off
SURVEY: tuple[SurveyRow, ...] = (
    SurveyRow("transformers >= 4.49 (every *ForSequenceClassification head)", "huggingface/transformers",
              "src/transformers/models/*/modeling_*.py; 5.x: src/transformers/modeling_layers.py", "c",
              "either side; the attention mask is not read; no pad id with batch > 1 is an error", ("PR 35911",)),
    SurveyRow("transformers <= 4.48", "huggingface/transformers", "src/transformers/models/*/modeling_*.py", "b",
              "class b from PR 24979 (2023), class a before it; BioGPT kept class a until PR 46782",
              ("PR 24979", "PR 46782")),
    SurveyRow("ColossalAI 0.5.0 pipeline forwards: llama, qwen2, opt", "hpcaitech/ColossalAI",
              "colossalai/shardformer/modeling/{llama,qwen2,opt}.py", "a",
              "right padding only: the bug this workbook reproduces", ("issue 6457",)),
    SurveyRow("ColossalAI 0.5.0 pipeline forwards: gpt2, bloom, falcon, gptj, mistral", "hpcaitech/ColossalAI",
              "colossalai/shardformer/modeling/*.py", "b", "plain left or right padding; breaks when pad == eos"),
    SurveyRow("ColossalChat reward model", "hpcaitech/ColossalAI",
              "applications/ColossalChat/coati/models/reward_model.py", "d", "its collator builds the mask from ones"),
    SurveyRow("TRL RewardTrainer (also GRPO/RLOO reward scoring, axolotl's reward trainer)", "huggingface/trl",
              "trl/trainer/reward_trainer.py", "c",
              "class c through transformers; forces right padding; pad defaults to eos; appends an eos"),
    SurveyRow("TRL PPO get_reward", "huggingface/trl", "trl/experimental/utils.py", "b",
              "applied to the response; queries left-padded to a fixed width; the examples add a separate pad token"),
    SurveyRow("OpenRLHF reward and critic models", "OpenRLHF/OpenRLHF", "openrlhf/models/model.py", "d",
              "left padding; makes the last token an eos with mask 1"),
    SurveyRow("DeepSpeed-Chat reward model", "deepspeedai/DeepSpeedExamples",
              "applications/DeepSpeed-Chat/dschat/utils/model/reward_model.py", "b",
              "k-th pad occurrence, k fixed per family (1 for OPT); forces right padding; pad == eos outside Llama"),
    SurveyRow("NeMo-Aligner reward model", "NVIDIA/NeMo-Aligner", "nemo_aligner/models/nlp/gpt/gpt_reward_model.py",
              "e", "pads on the right with eos, but carries the lengths"),
    SurveyRow("torchtune", "pytorch/torchtune", "torchtune/training/pooling.py (get_unmasked_sequence_lengths)", "d",
              "mask up to the first stop token; class a until PR 2066 (Jan 2025)", ("PR 2066",)),
    SurveyRow("LLaMA-Factory v0 (reward model, PPO, chat scoring)", "hiyouga/LLaMA-Factory",
              "src/llamafactory/train/rm/trainer.py", "a",
              "right padding forced (the maintainer's answer in issue 689)", ("issue 689",)),
    SurveyRow("PEFT ShadowPEFT auxiliary head", "huggingface/peft", "src/peft/tuners/shadow/ (_pool_last_token)", "a",
              "left padding broke its auxiliary loss; PR 3629 moved it to the rightmost real token",
              ("issue 3620", "PR 3629")),
    SurveyRow("sentence-transformers lasttoken pooling", "huggingface/sentence-transformers",
              "sentence_transformers/models/Pooling.py", "d", "either side"),
    SurveyRow("verl reward model", "volcengine/verl", "verl/workers/fsdp_workers.py (and the megatron one)", "d",
              "response mask up to the first eos"),
    SurveyRow("vLLM LastPool", "vllm-project/vllm", "vllm/model_executor/layers/pooler/", "e",
              "no padding: requests are packed"),
    SurveyRow("SGLang pooler", "sgl-project/sglang", "python/sglang/srt/layers/pooler.py", "e",
              "no padding: requests are packed"),
    SurveyRow("text-embeddings-inference", "huggingface/text-embeddings-inference",
              "backends/candle/src/models/flash_*.rs", "e", "no padding: requests are packed"),
    SurveyRow("NeMo Automodel retrieval, last-token pooling", "NVIDIA-NeMo/Automodel",
              "nemo_automodel/_transformers/retrieval.py", "a",
              "checks for left padding first: right only when a batch is all-left or all-right padded"),
)
# fmt: on

NO_RULE_OF_THEIR_OWN = ("Megatron-LM", "nanotron", "torchtitan", "unsloth")
"""Projects surveyed that compute no pooled position of their own."""


def projects_with_a_rule() -> list[str]:
    """The projects counted wherever the workbook says "N projects": one per GitHub repository
    of ``SURVEY``, in survey order (a repository of several rows, as transformers', counts
    once), ``NO_RULE_OF_THEIR_OWN`` not."""
    return list(dict.fromkeys(row.repository for row in SURVEY))


@dataclass(frozen=True)
class Incident:
    """An issue thread where the pooled position changed someone's results."""

    repository: str
    number: int
    what: str


# fmt: off
INCIDENTS: tuple[Incident, ...] = (
    Incident("RLHFlow/RLHF-Reward-Modeling", 49,
             "a Llama-3-8B reward model gave a chosen and a rejected answer the same score; "
             "a maintainer traced it to the pad id being the eos id"),
    Incident("allenai/reward-bench", 154,
             "GRM-Gemma-2B results came out far off because of the padding side; fixed and re-run"),
    Incident("allenai/reward-bench", 137, "scores depended on the batch size"),
    Incident("huggingface/trl", 937,
             "users saw about 60% accuracy on HH with the example reward script until config.pad_token_id was set"),
    Incident("EleutherAI/gpt-neox", 1285,
             "the reward was read one position off, at the last token instead of the eos; a fix was merged"),
    Incident("hiyouga/LLaMA-Factory", 689, "Qwen reward scores changed with the max length under left padding"),
    Incident("huggingface/peft", 3620,
             "an auxiliary classification loss trained against a pad position under left padding"),
)
# fmt: on


# ---------------------------------------------------------------- rendering

Cell = str | tuple[str, ...]
"""A table cell: text, or parts that each start a line."""


def _wrap(cell: Cell, width: int) -> list[str]:
    """A cell's lines. A tuple cell puts each part on its own line(s); lines break after a
    space or a slash, so a long path breaks between folders rather than inside a name."""
    lines: list[str] = []
    for part in cell if isinstance(cell, tuple) else (cell,):
        line = ""
        for piece in re.split(r"(?<=[ /])", str(part)):
            if line and len(line + piece.rstrip()) > width:
                lines += textwrap.wrap(line, width)  # a name longer than the column is split
                line = ""
            line += piece
        lines += textwrap.wrap(line, width) or [""]
    return lines or [""]


def _table_row(cells: Sequence[Cell], widths: Sequence[int]) -> list[str]:
    """One row of a fixed-width text table, its long cells wrapped inside their columns."""
    wrapped = [_wrap(c, w) for c, w in zip(cells, widths, strict=True)]
    across = zip_longest(*wrapped, fillvalue="")  # line i of every cell; a shorter cell is blank there
    return ["  ".join(f"{p:<{w}}" for p, w in zip(parts, widths, strict=True)).rstrip() for parts in across]


PROJECTOR_WIDTH = 88
"""The widest line printed text may have, the one width every formatter of the package keeps to:
a room reads the tables off a projector (the notebooks' stored outputs are held to it too)."""


def format_classes(width: int = PROJECTOR_WIDTH) -> str:
    """The five classes: how each finds the token, when it is right and wrong (the plain claims
    of ``pp_demo.pooling.failure``, each checked on every row), the registered rules that implement
    it, and the exact conditions as footnotes. Lines wrap at ``width``."""
    blocks = ["Against the true last real token, on rows whose padding carries the pad id:"]
    footnotes = ["exact conditions:"]
    for c in CLASSES.values():
        text = f"({c.letter}) {c.summary}"
        if c.rule != "known_lengths":  # a packed batch has no padding to be wrong about
            claims = claims_about(c.rule)
            text += f". {claims[0].upper()}{claims[1:]}."
            if not SENTENCES[c.rule, "true_last"].startswith("never"):
                exact = wrong_when(c.rule, "true_last")
                footnotes.append(textwrap.fill(f"({c.letter}) {exact}", width, subsequent_indent="    "))
        blocks.append(textwrap.fill(text, width, subsequent_indent="    ") + f"\n    rules: {', '.join(c.rules)}")
    return "\n".join([*blocks, "", *footnotes])


def format_survey(rows: Iterable[SurveyRow] = SURVEY, widths: Sequence[int] = (26, 37, 21)) -> str:
    """The survey table as text: the class and project, where (repository, file, citations),
    padding; a legend first, since the headings are short. The default widths fit ``PROJECTOR_WIDTH``
    (the where column holds the longest repository name on one line)."""
    lines = [
        "(a)-(e): the class, as above; where: the repository, the file, the issues and PRs cited;",
        "padding: the padding the code assumes, and what pad == eos does to it",
        "",
        *_table_row(("(class) project", "where", "padding"), widths),
        "  ".join("-" * w for w in widths),
    ]
    for r in rows:
        cited = ("cited: " + ", ".join(r.citations),) if r.citations else ()
        lines += _table_row((f"({r.rule_class}) {r.project}", (r.repository, r.path, *cited), r.padding), widths)
    return "\n".join([*lines, f"no pooling of their own: {', '.join(NO_RULE_OF_THEIR_OWN)}"])


def format_incidents(width: int = PROJECTOR_WIDTH) -> str:
    """The incidents, each with its repository and issue number, wrapped at ``width``."""
    return "\n".join(
        textwrap.fill(f"{i.repository}#{i.number}: {i.what}", width, subsequent_indent="    ") for i in INCIDENTS
    )
