"""The pull request's fifth claim, the multi-stage sentence, judged on ColossalAI's own engine.

The sentence: "the pipeline schedule passes the whole micro batch, input_ids included, to every
stage". It holds if every call of every stage's forward received ``input_ids``, as the engine
run records per case (``engine.worker``), with the tensors each rank sent to its peer. How they
get there is the documented difference: they never cross between the ranks. Each rank's schedule
cuts the micro-batch from its own copy of the batch (ColossalAI 0.5.0
``one_f_one_b.py:267-270``, then ``_utils.py:126``); only ``hidden_states`` (forward) and their
gradient (backward) are sent, so the claim needs every rank to be fed the same batch.
"""

import re
from typing import Any

from pp_demo.instruments.pull_request.claims import DOCUMENTED, NOT_AS_STATED, VERIFIED, claim_row

__all__ = ["CLAIM", "SENTENCE", "stage_evidence", "judge_engine"]

CLAIM = "5 every stage gets the whole micro batch, input_ids too"
SENTENCE = "the pipeline schedule passes the whole micro batch, input_ids included, to every stage"
RAN = (
    f'"{SENTENCE}": HybridParallelPlugin(pp_size=2) on two gloo ranks, 1f1b and interleaved, inference '
    "and training, per tree"
)
DIFFERENCE = (
    "input_ids reach every stage from each rank's own copy of the batch (one_f_one_b.py:267-270, "
    "_utils.py:126), not over the wire: only hidden_states and their gradients cross, so every "
    "rank must be fed the same batch"
)


def stage_evidence(record: dict[str, Any]) -> tuple[bool, set[str]]:
    """Whether every stage's every forward call received ``input_ids``; the names of the
    tensors that crossed between the ranks (``hidden_states``; ``tensor`` for a bare gradient)."""
    stages = record["evidence"]
    received = all(stage["received"] and all("input_ids" in call for call in stage["received"]) for stage in stages)
    crossed = {name for stage in stages for sent in stage["sent"] for name in re.findall(r"(\w+)\[", sent)}
    return received, crossed


def judge_engine(sdist: str, runs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """One row of the claims table from the engine's runs, ``{tree: run_engine's result}``."""
    seen, every_stage, over_wire = [], True, set()
    for tree, run in runs.items():
        by_schedule: dict[str, list[bool]] = {}
        for record in run["records"]:
            if "evidence" not in record:  # a case the plugin refused: no evidence
                continue
            received, crossed = stage_evidence(record)
            by_schedule.setdefault(record["schedule"], []).append(received)
            every_stage &= received
            over_wire |= crossed
        seen += [f"{tree} {s}: input_ids on every stage {all(r)} ({len(r)} cases)" for s, r in by_schedule.items()]
        every_stage &= bool(by_schedule) and run["failure"] is None
    ids_crossed = "input_ids" in over_wire
    verdict = DOCUMENTED if every_stage and not ids_crossed else VERIFIED if every_stage else NOT_AS_STATED
    crossed_text = ", ".join(sorted(over_wire)) or "nothing"
    seen_text = "; ".join(seen) + f"; tensors sent between the ranks: {crossed_text}"
    return claim_row(CLAIM, sdist, RAN, seen_text, verdict, DIFFERENCE if verdict == DOCUMENTED else "")
