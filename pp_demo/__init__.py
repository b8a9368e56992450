"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Modules, each one concept, imports flowing one way:
``rules`` (pooling rules) -> ``cases`` (padding cases, two references) -> ``table`` /
``figures`` -> ``explore`` (a row of your own) -> ``families`` (a model family as a row) ->
``stages`` (the split at given layers) -> ``jobs`` (what to run, what comes back), ``schedules``
(GPipe and 1F1B order per rank) -> ``local`` / ``ranks`` + ``distributed`` (one process, or one
rank per stage on ``torch.distributed.pipelining``) -> ``runner`` (``run(jobs, on=...)``, the one
way in) -> ``compare`` / ``matrix`` / ``checker`` (against ``model.forward``) -> ``training`` (+
``training_study``, ``study_figures``: over seeds), ``bench``, ``onnx_export``,
``colossalai_compat`` -> ``exercises`` -> ``cli`` (``python -m pp_demo``). Beside them, standard
library only: ``quiet`` (imports that print nothing), ``doctor`` (the preflight) and ``lab``
(``make lab``).
"""

import importlib

__version__ = "0.1.0"
__all__ = ["CASES", "PAD", "PaddingCase", "as_batch", "get_case", "FIX", "RULES", "get_rule",
           "pooled_positions"]

# The public names load on first use, so `import pp_demo` (and `python -m pp_demo doctor`)
# needs only the standard library: the doctor must run where torch is missing and say so.
_HOMES = {"CASES": "cases", "PAD": "cases", "PaddingCase": "cases", "as_batch": "cases",
          "get_case": "cases", "FIX": "rules", "RULES": "rules", "get_rule": "rules",
          "pooled_positions": "rules"}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module 'pp_demo' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
