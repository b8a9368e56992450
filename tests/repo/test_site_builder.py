"""The offline site, without a browser: goals and minutes read from each notebook, the notebooks
in order, the README's commands, nothing loaded from another host; and the folder holds itself:
every link resolves inside it (the glossary is a page of its own), and it holds no answer key.
(The pages themselves are opened in Chromium by ``make test-browser``.)"""

import html.parser
import pathlib
import posixpath
import re
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from tools import build_site

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_goals_are_the_bullets_under_what_you_will_learn_wrapped_lines_joined():
    info = build_site.summary(ROOT / "notebooks" / "01_four_padding_rows.ipynb")
    assert info["title"] == "01 · Four padding rows"
    assert len(info["goals"]) == 5 and info["goals"][0].startswith("why a model is cut into pipeline stages")
    episode = nbformat.read(ROOT / "notebooks" / "01_four_padding_rows.ipynb", as_version=4).metadata.episode
    assert info["minutes"] == f"{episode['teaching_minutes']} min teaching, {episode['exercise_minutes']} min exercises"


def test_minutes_come_from_episode_metadata(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# 09 · X\n\n## What you will learn\n\n- a\n  b")]
    )
    nb.metadata["episode"] = {"teaching_minutes": 20, "exercise_minutes": 10}
    nbformat.write(nb, tmp_path / "09_x.ipynb")
    info = build_site.summary(tmp_path / "09_x.ipynb")
    assert info == {"title": "09 · X", "goals": ["a b"], "minutes": "20 min teaching, 10 min exercises"}


def test_index_lists_every_notebook_in_order_and_the_readme_commands(notebooks):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = build_site.index_page(notebooks, readme)
    links = re.findall(r'href="(\d\d_[^"]+)\.html"', page)
    assert links == [p.stem for p in notebooks]
    assert "make reproduce" in page and "python -m pp_demo table" in page
    assert "facilitator.html" not in page
    # links to other hosts may be followed by the reader; nothing is loaded from one
    assert not re.search(r'src="(https?:)?//', page) and not re.search(r'<link[^>]+href="(https?:)?//', page)
    assert "<script" not in page


class _Refs(html.parser.HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self):
        super().__init__()
        self.refs, self.ids, self.every_id = [], set(), []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.refs.append(value)
            if name == "id" and value:
                self.ids.add(value)
                self.every_id.append(value)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site as `make site` builds it, in a folder of its own: ``{name: (refs, ids)}``."""
    out = tmp_path_factory.mktemp("site") / "site"
    build_site.build(out)
    pages = {}
    for page in out.glob("*.html"):
        parsed = _Refs()
        parsed.feed(page.read_text(encoding="utf-8"))
        pages[page.name] = (parsed.refs, parsed.ids)
    return out, pages


def test_every_link_of_every_page_resolves_inside_the_site(site):
    out, pages = site
    assert {"index.html", "glossary.html", "01_four_padding_rows.html"} <= set(pages)
    outside, missing = [], []
    for name, (refs, _) in pages.items():
        for ref in refs:
            url = urlparse(ref)
            if url.scheme in ("http", "https", "mailto", "data") or (not url.path and url.fragment):
                continue  # another host (followed by a reader, never loaded), inline data, this page's anchor
            path = posixpath.normpath(unquote(url.path))
            if url.scheme or path.startswith(("..", "/")):
                outside.append(f"{name}: {ref}")
            elif not (out / path).is_file():
                missing.append(f"{name}: {ref}")
            elif url.fragment and path == "glossary.html" and url.fragment not in pages[path][1]:
                missing.append(f"{name}: {ref} (no such term)")
    assert outside == [] and missing == [], (outside[:5], missing[:5])


def test_the_notebooks_glossary_links_land_on_the_sites_own_glossary_terms(site):
    _, pages = site
    terms = [ref for ref in pages["01_four_padding_rows.html"][0] if ref.startswith("glossary.html#")]
    assert len(terms) >= 5 and "glossary.html#stage" in terms
    assert not any("docs/glossary.md" in ref for refs, _ in pages.values() for ref in refs)


def test_the_glossary_gives_each_id_once_its_explicit_anchors_included(site):
    """The glossary writes ``<a id="1f1b"></a>`` in the heading "1F1B" (for JupyterLab): the site
    gives that heading no second ``1f1b``, which would make the page invalid HTML."""
    out, _ = site
    parsed = _Refs()
    parsed.feed((out / "glossary.html").read_text(encoding="utf-8"))
    assert {"1f1b", "gpipe", "nccl", "pad-id", "stage"} <= parsed.ids
    assert sorted(parsed.every_id) == sorted(parsed.ids)


def test_the_attendees_site_holds_no_answer_key(site):
    out, pages = site
    assert not (out / "facilitator.html").exists()
    assert not any("facilitator" in ref for refs, _ in pages.values() for ref in refs)
    answers = "## The exercises: answers, why, and the common wrong answers"
    assert answers in (ROOT / "docs" / "facilitator.md").read_text(encoding="utf-8")  # the key the guide holds
    text = "\n".join(page.read_text(encoding="utf-8") for page in out.glob("*.html"))
    assert answers.removeprefix("## ") not in text and "Set-up checklist for attendees" not in text


def test_a_link_the_site_cannot_hold_stops_the_build_naming_it():
    stems = {"01_four_padding_rows"}
    assert build_site.site_link("../docs/glossary.md#stage", "notebooks/01_four_padding_rows.ipynb", stems) == (
        "glossary.html#stage"
    )
    assert build_site.site_link("01_four_padding_rows.ipynb#x", "notebooks/01_four_padding_rows.ipynb", stems) == (
        "01_four_padding_rows.html#x"
    )
    with pytest.raises(build_site.LinkOutsideSite, match=r"links ../docs/facilitator.md"):
        build_site.site_link("../docs/facilitator.md", "notebooks/01_four_padding_rows.ipynb", stems)


def _tiny_checkout(root: pathlib.Path) -> pathlib.Path:
    """A checkout with one small notebook, the glossary and a README: what ``build`` reads."""
    (root / "notebooks").mkdir(parents=True)
    (root / "docs").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# One\n\nWhat you will learn\n\n- a thing")])
    nbformat.write(nb, root / "notebooks" / "01_one.ipynb")
    (root / "docs" / "glossary.md").write_text("# Glossary\n\n## stage\n\nA part.\n", encoding="utf-8")
    (root / "README.md").write_text("# Workbook\n\n## Set up\n", encoding="utf-8")
    return root


def test_the_builder_refuses_a_folder_holding_what_it_did_not_write_and_touches_nothing(tmp_path):
    root = _tiny_checkout(tmp_path / "checkout")
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(build_site.FolderNotOurs, match=r"holds thesis.tex, which the site builder did not write"):
        build_site.build(out, root)
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    # the committed notebooks' own folder: refused, every notebook kept
    before = sorted(p.name for p in (root / "notebooks").iterdir())
    with pytest.raises(build_site.FolderNotOurs, match=r"01_one.ipynb"):
        build_site.build(root / "notebooks", root)
    assert sorted(p.name for p in (root / "notebooks").iterdir()) == before
    # a file named as the folder: refused, kept
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(build_site.FolderNotOurs, match=r"is a file"):
        build_site.build(tmp_path / "afile", root)
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "x"


def test_the_builder_rebuilds_its_own_folder_but_a_users_file_added_since_stops_it(tmp_path):
    root = _tiny_checkout(tmp_path / "checkout")
    out = tmp_path / "new" / "site"
    first = build_site.build(out, root)
    assert {p.name for p in first} == {"index.html", "01_one.html", "glossary.html"}
    assert build_site.build(out, root) == first  # its own output: replaced
    assert sorted(p.name for p in out.iterdir()) == [
        ".pp_demo_site",
        "01_one.html",
        "01_one.ipynb",
        "glossary.html",
        "index.html",
    ]
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(build_site.FolderNotOurs, match=r"holds notes.txt"):
        build_site.build(out, root)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine" and (out / "index.html").is_file()


def test_the_command_says_one_line_exit_2_for_a_foreign_folder_and_1_for_one_it_cannot_write(
    tmp_path, monkeypatch, capsys
):
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    assert build_site.main([str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did not write" in err and "Traceback" not in err
    assert (out / "thesis.tex").is_file()

    def read_only(self, *args, **kwargs):  # as mkdir in a read-only checkout fails (root ignores modes)
        raise OSError(30, "Read-only file system", str(self))

    monkeypatch.setattr(pathlib.Path, "mkdir", read_only)
    assert build_site.main([str(tmp_path / "site")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the site" in err and "Read-only file system" in err
    assert build_site.main(["a", "b"]) == 2
    assert "usage" in capsys.readouterr().err
