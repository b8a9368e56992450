"""``make guide`` (``python -m tools.guide``): docs/facilitator.md and the README's minutes,
written from the notebooks' episode metadata (``tools.episodes``) by ``tools.facilitator``.

A command of its own, on top of both, so that ``episodes`` need not import ``facilitator``
(which imports ``episodes``): the tools import each other one way.
"""

from __future__ import annotations

import sys

from tools import episodes, facilitator


def main() -> int:
    try:
        written = facilitator.write_all(episodes.ROOT)
    except (episodes.EpisodeError, OSError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path.relative_to(episodes.ROOT)}")  # no machine path in the output
    return 0


if __name__ == "__main__":
    sys.exit(main())
