"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Modules, each one concept, imports flowing one way:
``rules`` (pooling rules) -> ``cases`` (padding cases, two references) -> ``table`` /
``figures`` -> ``families`` (a model family as a row) -> ``stages`` (the split at given
layers) -> ``jobs`` (what to run, what comes back), ``schedules`` (GPipe and 1F1B order per
rank) -> ``local`` / ``ranks`` + ``distributed``
(one process, or one rank per stage on ``torch.distributed.pipelining``) -> ``runner``
(``run(jobs, on=...)``, the one way in) -> ``compare`` / ``matrix`` / ``checker`` (against
``model.forward``) -> ``training``, ``bench``, ``onnx_export``, ``colossalai_compat`` ->
``exercises`` -> ``cli`` (``python -m pp_demo``).
"""

from .cases import CASES, PAD, PaddingCase, as_batch, get_case
from .rules import FIX, RULES, get_rule, pooled_positions

__version__ = "0.1.0"
__all__ = ["CASES", "PAD", "PaddingCase", "as_batch", "get_case", "FIX", "RULES", "get_rule",
           "pooled_positions"]
