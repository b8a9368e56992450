"""The repository's own tools: they edit or check this checkout's files (notebooks, the guide,
the site) and are no part of pp_demo's API, so they are not in the wheel.

Run them from the repository root as modules, ``python -m tools.NAME`` (the Makefile does),
so that they import each other as ``from tools import episodes``; ``timing`` and ``agenda``
import no other tool, ``episodes`` imports ``timing``, ``facilitator`` imports both,
``guide`` and ``time_core`` sit on top.
"""

import sys

# ``python -m tools.install_env`` (``make setup``) imports this first: on a Python older than
# 3.11 one line says which to use, before a tool written for 3.11 fails on its syntax. This file
# parses on Python 2.7 too.
if sys.version_info[:2] < (3, 11):
    sys.stderr.write(
        "setup: Python %s is not one the lock is resolved for (3.11, 3.12 or 3.13): "
        "run `make setup PYTHON=python3.12` (any of them) or install one\n"
        % ".".join(str(part) for part in sys.version_info[:3])
    )
    raise SystemExit(1)
