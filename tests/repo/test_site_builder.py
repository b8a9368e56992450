"""The offline site's index, without a browser: goals and minutes read from each notebook,
the notebooks in order, the README's commands, nothing loaded from another host.
(The pages themselves are opened in Chromium by ``make test-browser``.)"""

import pathlib
import re

import nbformat

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
    page = build_site.index_page(notebooks, readme, guide=False)
    links = re.findall(r'href="(\d\d_[^"]+)\.html"', page)
    assert links == [p.stem for p in notebooks]
    assert "make reproduce" in page and "python -m pp_demo table" in page
    assert "facilitator.html" not in page
    # links to other hosts may be followed by the reader; nothing is loaded from one
    assert not re.search(r'src="(https?:)?//', page) and not re.search(r'<link[^>]+href="(https?:)?//', page)
    assert "<script" not in page
