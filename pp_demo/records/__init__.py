"""The instruments' committed results, read back for the notebooks, the exercises and the figures:
one module per record (``bench``: ``results/bench_cpu.json``; ``engine``:
``results/colossalai_engine.json``; ``pull_request``: ``results/verify_pr.json`` and the
pull request's diffs).

Everything here reads and formats; nothing measures, runs ColossalAI or writes. The instruments
(``pp_demo.instruments``) import from here when they print the same lines, never the other way.
"""
