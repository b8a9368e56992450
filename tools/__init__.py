"""The repository's own tools: they edit or check this checkout's files (notebooks, the guide,
the site) and are no part of pp_demo's API, so they are not in the wheel.

Run them from the repository root as modules, ``python -m tools.NAME`` (the Makefile does),
so that they import each other as ``from tools import episodes``; ``timing`` and ``agenda``
import no other tool, ``episodes`` imports ``timing``, ``facilitator`` imports both,
``guide`` and ``time_core`` sit on top.
"""
