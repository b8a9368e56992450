"""pp_demo: the pooled token of pipeline-parallel sequence classification, reproduced exactly.

Read ``core.py`` first, top to bottom; docs/architecture.md maps the rest by who it is for. This file
parses on any Python, so that ``python -m pp_demo`` on one too old says which Python to use.
"""

import importlib
import sys

__version__ = "0.1.0"

# The package's own names are the core's; everything else is imported from its module, whose path
# says who it is for. They load on first use: `import pp_demo` (the doctor) needs no torch.
__all__ = [
    "FIX", "RULES", "CORE_RULES", "Rule", "get_rule", "count_minus_one",
    "CASES", "PAD", "REVIEW_TABLE", "PaddingCase", "as_batch", "get_case",
    "FAMILIES", "Family", "build_model", "get_family",
    "Stages", "split_model", "pipeline_logits", "micro_batches", "Plan", "plan_run",
]  # fmt: skip


def __getattr__(name):  # type: (str) -> object
    if name not in __all__:
        raise AttributeError("module 'pp_demo' has no attribute " + repr(name))
    return getattr(importlib.import_module(".core", __name__), name)


if "ipykernel" in sys.modules:  # in a Jupyter kernel, the package's errors as one line each
    importlib.import_module(".workshop.cell_errors", __name__).install()
