"""Write the benchmark block of docs/results.md from the committed results file.

``python -m tools.bench_docs`` replaces what lies between the page's two bench markers with
``pp_demo.instruments.bench.readme_block`` of ``results/bench_cpu.json``; ``--check`` exits 1 when the page
differs (``tests/bench/test_bench.py`` makes the same comparison). Run it after a benchmark run
replaced the committed file (``make bench-results`` does both). The block itself is formatted by
the package; where it goes is this checkout's business, so the writer lives here.
"""

import sys
from pathlib import Path
from typing import Any

from pp_demo.errors import BadInput

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results.md"
RESULTS = ROOT / "results" / "bench_cpu.json"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def _split(text: str, name: str) -> tuple[str, str]:
    """The page before its bench block (with the first marker) and after it (from the second)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise BadInput(f"{name} must hold one {BEGIN} line and, after it, one {END} line")
    head, rest = text.split(BEGIN)
    return head + BEGIN + "\n", END + rest.split(END)[1]


def rendered(text: str, result: dict[str, Any], name: str = "the page") -> str:
    """``text`` with its bench block rewritten from ``result``; the rest stays as it is."""
    from pp_demo.instruments.bench import readme_block

    head, tail = _split(text, name)
    return f"{head}{readme_block(result)}\n{tail}"


def main(argv: list[str]) -> int:
    from pp_demo.records.bench import load_results

    text = PAGE.read_text()
    new = rendered(text, load_results(RESULTS), str(PAGE.relative_to(ROOT)))
    if "--check" in argv:
        if new != text:
            print(f"{PAGE.relative_to(ROOT)} differs from {RESULTS.relative_to(ROOT)}: run python -m tools.bench_docs")
            return 1
        return 0
    PAGE.write_text(new)
    print(f"rewrote the benchmark block of {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
