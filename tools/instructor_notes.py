"""The instructor's notes of the guide: the room, the words, and each episode's plan.

Written here, once, as data, and rendered into docs/facilitator.md by ``tools.facilitator``
(``make guide``): per episode what to live-code and what to run, the one idea to stress, a
discussion prompt and what to cut when late (sections or exercises the plans take, with the
minutes each frees, read from the metadata; tested: each is in every plan that takes the
notebook, and nothing kept needs it); for the whole workshop the learner profile,
prerequisites, a glossary, how to debrief and pair, a fallback for broken machines and a
feedback slot. ``tests/repo/test_episodes.py`` checks every notebook has its notes and every
glossary term is used in the notebooks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GLOSSARY_PAGE = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"


@dataclass(frozen=True)
class EpisodeNotes:
    live_code: str  # what the instructor types, with the room following
    run: str  # what is only run and read (too long or too fiddly to type)
    stress: str  # the one idea to take home
    discuss: str  # a prompt for the room or for pairs
    cut_when_late: tuple[str, ...]  # ## headings or exercise keys every plan taking the notebook holds
    loses: str  # what the room loses by the cut (or, with no cut, why there is none)


# fmt: off
EPISODES = {
    "01": EpisodeNotes(
        "the four review rows and one rule (`count_minus_one`) on them",
        "the review table figure and the printed table",
        "which token is pooled is one line of arithmetic, and only the mask knows the true last token",
        "your own stack: which side does it pad on, and is its pad token also a real token?",
        ("01.3",),
        "its prediction exercise (give it as homework)",
    ),
    "02": EpisodeNotes(
        "`split_model(model)` and the three tensors the last stage gets",
        "the two-rank run (`run(jobs, on=\"ranks\")`: a few seconds of start-up)",
        "a stage is a view on the model's own modules; any difference later is the pooling",
        "what else, besides the pooling, could a pipeline stage need from the original batch?",
        ("02.1",),
        "its exercise (give it as homework)",
    ),
    "03": EpisodeNotes(
        "`reproduce(\"llama\", \"count\")` and its one-line verdict",
        "the three families and the diff figure",
        "the verdict belongs to the row: every left-padded row misses, whatever the split",
        "why did ColossalAI's own tests pass? What input would your tests need to catch this?",
        ("03.1",),
        "its prediction of the reproduction line (give it as homework)",
    ),
    "04": EpisodeNotes(
        "`tokenizer.pad_token = tokenizer.eos_token` and the ids it gives",
        "the rule-by-batch tables",
        "with pad == eos a pad id can be a real token: only the attention mask tells",
        "which of your models ship without a pad token, and what did you set it to?",
        ("04.3",),
        "one exercise (give it as homework)",
    ),
    "05": EpisodeNotes(
        "nothing: run the one-seed cell and read the curves",
        "the ten-seed table and figure, read from the committed results files",
        "with the fix the pipeline trains exactly like model.forward; with the bug it depends on the version",
        "would your evaluation have noticed a model that stays below 0.7 on both padding sides?",
        ("One seed, three runs from the same weights",),
        "one seed's curves: the ten-seed table says the same",
    ),
    "06": EpisodeNotes(
        "nothing: a demo in every plan; show the engine's `[False, True]` -> `[True, True]`",
        "ColossalAI's own forwards, one stage holding every layer",
        "the same wrong rows come out of ColossalAI's own code as out of pp_demo's count rule",
        "who on your team would have read the pooling line of a framework's forward?",
        (),
        "nothing to cut: a demo in every plan (shorten it to the engine's printed line)",
    ),
    "07": EpisodeNotes(
        "one unfamiliar pooling expression, classified on the padding cases",
        "the survey tables",
        "five classes of rule; each trusts one input, and packing needs the class that reads lengths",
        "which class does your training stack use, and which does your serving stack use?",
        ("07.1",),
        "its classification exercise (give it as homework)",
    ),
    "08": EpisodeNotes(
        "the first-pad rule's raw -1 on a row with no pad id",
        "both exports and the onnxruntime comparison",
        "the modulo matters only where -1 is not an index (the legacy exporter); the fix needs none",
        "which of your exported models index with a value computed from the input?",
        (),
        "nothing to cut: in no plan (reading after the workshop)",
    ),
    "09": EpisodeNotes(
        "nothing: read the diff and the verdicts",
        "`python -m pp_demo verify-pr` only if the sdists are cached (minutes otherwise)",
        "a claim of a pull request can be checked on the project's own source; the record says how",
        "which claim of the pull request would you have accepted without a test?",
        (),
        "nothing to cut: in no plan (reading after the workshop)",
    ),
    "10": EpisodeNotes(
        "`timeline(\"gpipe\", 2, 4)` and its idle slots",
        "the benchmark lines from the results file, and the ranks' recorded order",
        "more micro-batches shrink GPipe's bubble; 1F1B keeps the bubble and bounds the memory",
        "on your cluster, what costs more: the bubble, or the activations held?",
        (),
        "nothing to cut: in no plan (reading after the workshop)",
    ),
    "11": EpisodeNotes(
        "the two layers around the stages, and what each hands the engine",
        "the ranks' cell (two DeepSpeed ranks, about 10 s) and the checker's two commands",
        "DeepSpeed's engine has no classifier forward: the pooling is yours, and the count rule fails there too",
        "who on your team wrote the last stage of your pipeline, and what does it pool?",
        (),
        "nothing to cut: in no plan (reading after the workshop)",
    ),
}

# The guide's table takes every term of docs/glossary.md (the one home of their definitions, which
# the notebooks link) and adds these, the workbook's own words, which the notebooks define in place.
GLOSSARY = {
    "left padding": "pads before the real tokens, as batched generation needs",
    "pad == eos": "a tokenizer whose pad token is its end-of-sequence token, so a pad id can be real",
    "attention mask": "1 for a real token, 0 for padding: the only input that knows which is which",
    "true last real token": "the reference read from the mask: the last position it marks real",
    "model.forward's position": "the reference a pipeline must reproduce: the rightmost non-pad id",
    "review table": "four padded rows from the pull request's review, the rows this workbook is built on",
}


def glossary_page_terms(page: Path = GLOSSARY_PAGE) -> dict[str, str]:
    """Each ``###`` term of the glossary page with the first paragraph of its definition."""
    terms: dict[str, str] = {}
    for block in re.split(r"^### ", page.read_text(encoding="utf-8"), flags=re.M)[1:]:
        term, _, body = block.partition("\n")
        paragraph = " ".join(body.strip().split("\n\n")[0].split())
        terms[term.strip()] = paragraph.rstrip(".")
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


def cut_line(notes: EpisodeNotes, ep: dict[str, Any]) -> str:
    """What to cut when late, with the minutes each part frees (from the episode metadata)."""
    sections = ep["sections"]
    exercises = sections.get("Exercises", {}).get("exercises") or {}
    parts = []
    for part in notes.cut_when_late:
        if part in exercises:
            parts.append(f"exercise {part} ({exercises[part]['minutes']} min)")
        else:
            minutes = sections[part]["minutes"] if part in sections else "?"
            parts.append(f'"{part}" ({minutes} min)')
    return ("; ".join(parts) + f": the room loses {notes.loses}") if parts else notes.loses


def guide_lines(episodes: dict[str, dict[str, Any]]) -> list[str]:
    """The guide's sections: the room, the glossary, and the notes per episode (``episodes``:
    the episode metadata by notebook number)."""
    lines = ["## The room", ""]
    for title, text in ROOM.items():
        lines += [f"**{title}.** {text}", ""]
    lines += ["## Glossary", "", "In full, linked from every notebook: [glossary.md](glossary.md).", ""]
    lines += ["| term | meaning |", "|---|---|"]
    terms = {**glossary_page_terms(), **GLOSSARY}
    lines += [f"| {term} | {meaning.replace('|', '/')} |" for term, meaning in terms.items()]
    lines += ["", "## Instructor notes, per episode", ""]
    for number, notes in EPISODES.items():
        lines += [
            f"**{number}.**",
            "",
            f"- Live-code: {notes.live_code}.",
            f"- Run and read: {notes.run}.",
            f"- Stress: {notes.stress}.",
            f"- Discuss: {notes.discuss}",
            f"- When late, cut: {cut_line(notes, episodes[number])}.",
            "",
        ]
    return lines
