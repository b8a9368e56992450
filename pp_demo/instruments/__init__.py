"""The instruments that write ``results/`` and ``docs/`` for this repository: the benchmark
(``bench/``), ColossalAI's engine on two ranks (``engine/``) and the pull request's verification
on ColossalAI's sdists (``pull_request/``).

Maintainers run them (``python -m pp_demo bench``, ``colossalai-engine``, ``verify-pr``); a
learner reads what they wrote through ``pp_demo.records``, and nothing of the core, the ranks,
the notebooks or their helpers imports this folder.
"""
