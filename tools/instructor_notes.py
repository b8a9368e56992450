"""The instructor's notes of the guide: the room, the words, and each episode's plan.

Written here, once, as data, and rendered into docs/facilitator.md by ``tools.facilitator``
(``make guide``): per episode what to live-code and what to run, each tied to the ``##`` section it
happens in, the one idea to stress and a discussion prompt. The guide renders them per plan, from
the plan itself (``plan_notes``): a note whose section the plan does not teach is not shown, and
what to cut when late is the plan's own exercises in the room, sent home, with the minutes each
frees. So the notes cannot contradict the plan they sit under. For the whole workshop the learner profile,
prerequisites, a glossary, how to debrief and pair, a fallback for broken machines and a
feedback slot. ``tests/repo/test_episodes.py`` checks every notebook has its notes and every
glossary term is used in the notebooks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

GLOSSARY_PAGE = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"


@dataclass(frozen=True)
class EpisodeNotes:
    live_code: tuple[tuple[str, str], ...]  # (## section, what the instructor types there, the room following)
    run: tuple[tuple[str, str], ...]  # (## section, what is only run and read there)
    stress: str  # the one idea to take home
    discuss: str  # a prompt for the room or for pairs


# fmt: off
EPISODES = {
    "01": EpisodeNotes(
        (("The same model, two answers", "the four rows through `model.forward` and the pipeline, then the "
          "prediction in pairs"),
         ("Why left padding breaks the count rule", "`count_minus_one` on the left-padded row")),
        (("The review table", "the printed table and its figure"),),
        "which token is pooled is one line of arithmetic, and only the mask knows the true last token",
        "your own stack: which side does it pad on, and is its pad token also a real token?",
    ),
    "02": EpisodeNotes(
        (("Cut a tiny model in two", "`split_model(model, split_points=2)`"),
         ("What the last stage gets", "the three tensors the last stage gets")),
        (("Both stages in one process", "`pipeline_logits` against `forward_logits`"),),
        "a stage is a view on the model's own modules; any difference later is the pooling",
        "what else, besides the pooling, could a pipeline stage need from the original batch?",
    ),
    "03": EpisodeNotes(
        (("The reproduction", "`reproduce(\"llama\", \"count\")` and its one-line verdict"),),
        (("Five rows, three families", "the three families and the diff figure"),),
        "the verdict belongs to the row: every left-padded row misses",
        "why did ColossalAI's own tests pass? What input would your tests need to catch this?",
    ),
    "04": EpisodeNotes(
        (("A real tokenizer, with pad = eos", "`tokenizer.pad_token = tokenizer.eos_token` and the ids it gives"),),
        (("The rules on these batches", "the rule-by-batch tables"),),
        "with pad == eos a pad id can be a real token: only the attention mask tells",
        "which of your models ship without a pad token, and what did you set it to?",
    ),
    "05": EpisodeNotes(
        (),
        (("One seed, three runs from the same weights", "the one-seed cell, then read the curves"),),
        "with the fix the pipeline trains exactly like model.forward; with the bug it trains on the wrong token",
        "would your evaluation have noticed a model that stays below 0.7 on both padding sides?",
    ),
    "06": EpisodeNotes(
        (),
        (("Llama, Qwen2 and OPT: the count rule", "ColossalAI's own forwards, one stage holding every layer: "
          "show the engine's `[False, True]` -> `[True, True]`"),),
        "the same wrong rows come out of ColossalAI's own code as out of pp_demo's count rule",
        "who on your team would have read the pooling line of a framework's forward?",
    ),
    "07": EpisodeNotes(
        (("All rules on the padding cases", "one unfamiliar pooling expression, classified on the padding cases"),),
        (("The survey: which project uses which class", "the survey tables"),),
        "five classes of rule; each trusts one input, and packing needs the class that reads lengths",
        "which class does your training stack use, and which does your serving stack use?",
    ),
    "08": EpisodeNotes(
        (("The pooling step, exported", "the first-pad rule's raw -1 on a row with no pad id"),),
        (("The pooling step, exported", "both exports and the onnxruntime comparison"),),
        "the modulo matters only where -1 is not an index (the legacy exporter); the fix needs none",
        "which of your exported models index with a value computed from the input?",
    ),
    "09": EpisodeNotes(
        (),
        (("The verdicts", "the diff and the verdicts, read from the record"),),
        "a claim of a pull request can be checked on the project's own source; the record says how",
        "which claim of the pull request would you have accepted without a test?",
    ),
    "10": EpisodeNotes(
        (("Micro-batches and the bubble", "`timeline(\"gpipe\", 2, 4)` and its idle slots"),),
        (("The same stages as two real ranks", "the two-rank run (a few seconds of start-up)"),
         ("What the ranks really ran", "the ranks' recorded order")),
        "more micro-batches shrink GPipe's bubble; 1F1B keeps the bubble and bounds the memory",
        "on your cluster, what costs more: the bubble, or the activations held?",
    ),
    "11": EpisodeNotes(
        (("The stages as a PipelineModule", "`as_layers(stages)`: the layer around each stage and what it hands "
          "the engine"),),
        (("The count rule's miss, and the fix, on two ranks", "the ranks' cell (two DeepSpeed ranks, about 10 s) "
          "and its row table"),
         ("Your own DeepSpeed pipeline, checked", "the checker's two commands and their verdicts")),
        "DeepSpeed's engine has no classifier forward: the pooling is yours, and the count rule fails there too",
        "who on your team wrote the last stage of your pipeline, and what does it pool?",
    ),
    "12": EpisodeNotes(
        (("The one line that differs", "`LastStage.forward` and the two rules' working lines"),),
        (("Other split points, other micro-batch counts", "the split-point table"),),
        "the buggy and the fixed pipeline differ in one line; the verdict belongs to the row, not the split",
        "which of your tests feed a left-padded row, or a pad id inside the text?",
    ),
    "13": EpisodeNotes(
        (),
        (("Ten seeds, two transformers versions", "the ten-seed table and figure, from the committed results files"),
         ("The mechanism: what a pad position sees", "the pad-sight lines")),
        "what the count rule does to training depends on what the library computes at a pad position",
        "which numbers of your training would have moved if the library changed what a pad computes?",
    ),
}
# fmt: on


def glossary_page_terms(page: Path = GLOSSARY_PAGE) -> dict[str, str]:
    """Each ``###`` term of the glossary page with the first paragraph of its definition. A heading's
    markup is not its term: ``### <a id="1f1b"></a>1F1B`` (an anchor for JupyterLab) is "1F1B"."""
    terms: dict[str, str] = {}
    for block in re.split(r"^### ", page.read_text(encoding="utf-8"), flags=re.M)[1:]:
        term, _, body = block.partition("\n")
        paragraph = " ".join(body.strip().split("\n\n")[0].split())
        terms[re.sub(r"<[^>]+>", "", term).strip()] = paragraph.rstrip(".")
    return terms


ROOM = {
    "Learner profile": (
        "ML engineers who train or serve Hugging Face models and know PyTorch, but have not run "
        "pipeline parallelism; maintainers of training frameworks for the optional episodes."
    ),
    "Prerequisites": (
        "Python and PyTorch tensors (indexing, `argmax`); what a tokenizer, a batch and an attention "
        "mask are. No distributed training, no GPU: everything runs on a laptop's CPU."
    ),
    "Pairing and helpers": (
        "Pair attendees for the exercises: one types, one predicts the check's line before it runs. "
        "One helper per ten attendees walks the room during exercises and runs `make doctor` on any "
        "machine that fails."
    ),
    "Debriefing an exercise": (
        "After each exercise block, ask one pair for a wrong first try and the counterexample it got: "
        "the counterexample is the lesson. Then show the reference answer and its why (below)."
    ),
    "A machine that breaks": (
        "Pair its owner with a neighbour, or open the read-only site (`make site`, then "
        "site/index.html on any machine): every notebook with its stored outputs."
    ),
    "Feedback": (
        "Two minutes before the wrap-up: each attendee writes one thing that worked and one that did "
        "not on a sticky note (or the form you share); read them before the next run of the workshop."
    ),
}
# fmt: on


def _at(notes: tuple[tuple[str, str], ...], sections: list[str]) -> str:
    return "; ".join(f"{text} ({heading})" for heading, text in notes if heading in sections)


def take_notes(number: str, sections: list[str], in_room: list[str], minutes: dict[str, int]) -> list[str]:
    """The notes of notebook ``number`` as a plan takes it: only the notes of the ``sections`` it
    teaches, and what to cut when late: its exercises ``in_room`` sent home (``minutes`` each)."""
    notes = EPISODES[number]
    lines = []
    if live := _at(notes.live_code, sections):
        lines.append(f"- Live-code: {live}.")
    if run := _at(notes.run, sections):
        lines.append(f"- Run and read: {run}.")
    lines += [f"- Stress: {notes.stress}.", f"- Discuss: {notes.discuss}"]
    if in_room:
        freed = "; ".join(f"exercise {key} ({minutes[key]} min)" for key in in_room)
        lines.append(f"- When late: send {freed} home, with its check.")
    return lines


def room_lines() -> list[str]:
    """The room and the glossary: the same for every plan."""
    lines = ["## The room", ""]
    for title, text in ROOM.items():
        lines += [f"**{title}.** {text}", ""]
    lines += ["## Glossary", "", "In full, linked from every notebook: [glossary.md](glossary.md).", ""]
    lines += ["| term | meaning |", "|---|---|"]
    # every term from the attendees' glossary page, their one home: the guide adds none of its own
    terms = glossary_page_terms()
    lines += [f"| {term} | {meaning.replace('|', '/')} |" for term, meaning in terms.items()]
    return lines + [""]
