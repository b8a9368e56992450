"""Imported first by the fork server the spawned ranks start from (``pp_demo.ranks.launch``).

Ctrl-C reaches every process of the terminal's group: the fork server too, which may still be
importing torch and transformers (seconds) and would print the interrupted import's traceback,
some sixty lines around the caller's one ``interrupted`` line. The server ignores SIGINT from
its very first import on; the ranks it forks inherit that, and the caller, told by its own
``KeyboardInterrupt``, stops them (``spawn_ranks``' clean-up). Imported anywhere else, this
module does nothing.
"""

import signal
import sys

# multiprocessing starts the server as ``python -c "from multiprocessing.forkserver import main; ..."``
if sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
