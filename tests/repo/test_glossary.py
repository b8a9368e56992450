"""Jargon is met first where it is explained: on the core path, each glossary term's first
appearance is a link to ``docs/glossary.md`` or the notebook's own definition of it.

The terms are the glossary's ``###`` headings: the list lives in one place. The core path is
the notebooks whose episode track is "core", read in order, markdown cells only (what is read
aloud); a term counts where it stands as a word ("stages" is "stage"; "two-stage" is not). A
definition is the term set in bold or italics (``**rank**``, ``*stages*``).
"""

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "docs" / "glossary.md"
LINK = "../docs/glossary.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def glossary_terms(page: str | None = None) -> list[str]:
    """The ``###`` headings' text, as a reader sees it (an explicit ``<a id>`` in one is markup)."""
    page = GLOSSARY.read_text(encoding="utf-8") if page is None else page
    return [re.sub(r"<[^>]+>", "", line[4:]).strip() for line in page.splitlines() if line.startswith("### ")]


def anchor(term: str) -> str:
    """The heading's anchor as GitHub and the site write it."""
    return re.sub(r"[^\w\- ]", "", term.lower()).replace(" ", "-")


def lab_id(heading: str) -> str:
    """The heading's id in JupyterLab's Markdown Preview (4.x), as seen in Chromium: its text as
    written, each space made a hyphen, case and punctuation kept ("1F1B", "pad-id",
    "05-·-What-the-bug-does-to-training"). A link's fragment must match it exactly: ``#1f1b``
    left the glossary open at its top."""
    return heading.replace(" ", "-")


def explicit_anchors(page: str) -> list[str]:
    """The ids the page gives with ``<a id="...">``, which Lab keeps (as ``data-jupyter-id``) and
    lands on; a ``name`` it strips."""
    return re.findall(r'<a id="([^"]+)"></a>', page)


def unreachable(fragments: list[str], page: str) -> list[str]:
    """Each fragment that does not land on ``page`` in Lab, on GitHub and on the site alike: it is
    neither an explicit anchor nor the id of a heading that Lab and GitHub spell the same."""
    same = {anchor(h) for h in glossary_terms(page) if lab_id(h) == anchor(h)}
    return [f for f in fragments if f not in set(explicit_anchors(page)) | same]


def glossary_links() -> list[tuple[str, str]]:
    """``(file, fragment)`` of every link to a glossary entry in the notebooks and the docs."""
    files = [*NOTEBOOKS, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*.md"))]
    return [
        (path.name, fragment)
        for path in files
        for fragment in re.findall(r"glossary\.md#([^)\s\"'>]+)", path.read_text(encoding="utf-8"))
    ]


def _term(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(term)}(s|es)?(?![\w-])", re.I)


def _explained_spans(text: str) -> list[tuple[int, int]]:
    """Where text is a glossary link's label, or set in bold or italics."""
    spans = [m.span(1) for m in re.finditer(r"\[([^\]]+)\]\(" + re.escape(LINK) + r"[^)]*\)", text)]
    spans += [m.span(1) for m in re.finditer(r"\*\*([^*]+)\*\*", text)]
    spans += [m.span(1) for m in re.finditer(r"(?<!\*)\*([^*\s][^*]*)\*(?!\*)", text)]
    return spans


def first_uses_unexplained(texts: list[str], terms: list[str]) -> list[str]:
    """Each term whose first appearance in ``texts`` (in order) is neither linked nor defined."""
    out, seen = [], set()
    for where, text in enumerate(texts):
        spans = _explained_spans(text)
        for term in terms:
            match = None if term in seen else _term(term).search(text)
            if match:
                seen.add(term)
                if not any(a <= match.start() and match.end() <= b for a, b in spans):
                    context = text[max(0, match.start() - 40) : match.end() + 20]
                    out.append(f"{term!r} first appears unexplained in text {where}: ...{context!r}")
    return out


def _markdown(path: pathlib.Path) -> list[str]:
    return [
        "".join(c["source"])
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    ]


def _core_path() -> list[pathlib.Path]:
    return [p for p in NOTEBOOKS if json.loads(p.read_text(encoding="utf-8"))["metadata"]["episode"]["track"] == "core"]


def test_the_glossary_defines_the_workshop_jargon():
    must = {"pipeline parallelism", "stage", "rank", "micro-batch", "shardformer", "policy", "gloo", "NCCL",
            "1F1B", "interleaved", "GPipe", "bubble", "model zoo", "sdpa", "eager attention", "zeroed",
            "bypassed", "pooled token", "pad id", "eos"}  # fmt: skip
    assert must <= set(glossary_terms())


def test_on_the_core_path_every_term_is_first_met_linked_or_defined():
    texts = [text for path in _core_path() for text in _markdown(path)]
    assert first_uses_unexplained(texts, glossary_terms()) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_links_the_glossary_in_its_first_cell(path):
    first = _markdown(path)[0]
    assert f"]({LINK})" in first
    for label, target in re.findall(r"\[([^\]]+)\]\(" + re.escape(LINK) + r"#([^)]+)\)", first):
        assert target in {anchor(t) for t in glossary_terms()}, (label, target)


def test_the_check_catches_a_term_used_before_its_link():
    terms = ["stage", "rank"]
    assert first_uses_unexplained(["a *stage* runs on a [rank](../docs/glossary.md#rank)"], terms) == []
    assert first_uses_unexplained(["each stage", "a **stage**"], terms) != []
    assert first_uses_unexplained(["the ranks", "[rank](../docs/glossary.md#rank)"], terms) != []
    assert first_uses_unexplained(["a two-stage pipeline", "a *stage*"], terms) == []


def test_every_link_to_a_glossary_entry_lands_on_it_in_lab_on_github_and_on_the_site():
    links = glossary_links()
    assert len(links) >= 50 and ("05_training_impact.ipynb", "1f1b") in links  # the one the issue found
    page = GLOSSARY.read_text(encoding="utf-8")
    assert [(name, f) for name, f in links if unreachable([f], page)] == []


def test_a_term_lab_spells_otherwise_carries_githubs_anchor_explicitly():
    """So a new link written by GitHub's rule (the one ``anchor`` and the site follow) lands in Lab too."""
    page = GLOSSARY.read_text(encoding="utf-8")
    differ = [h for h in glossary_terms(page) if lab_id(h) != anchor(h)]
    assert {"1F1B", "GPipe", "NCCL"} <= set(differ)
    assert [h for h in differ if anchor(h) not in explicit_anchors(page)] == []
    assert len(explicit_anchors(page)) == len(set(explicit_anchors(page)))


def test_the_landing_check_tells_a_heading_lab_spells_otherwise():
    assert (lab_id("1F1B"), anchor("1F1B")) == ("1F1B", "1f1b")
    assert (lab_id("pad id"), anchor("pad id")) == ("pad-id", "pad-id")
    assert anchor("pad == eos") == "pad--eos" and anchor("model.forward's position") == "modelforwards-position"
    assert unreachable(["1f1b", "pad-id"], "### 1F1B\n\n### pad id\n") == ["1f1b"]
    assert unreachable(["1f1b", "1F1B"], '### <a id="1f1b"></a>1F1B\n') == ["1F1B"]  # GitHub has no "1F1B"
    assert unreachable(["nccl"], '### <a name="nccl"></a>NCCL\n') == ["nccl"]  # Lab strips a name
