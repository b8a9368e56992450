"""docs/architecture.md against the tree: the paths it names exist (CONTRIBUTING.md's too),
the constants each recipe points at are in the file it names, and each recipe's count of
source files is true."""

import re

import pytest

PAGE = "docs/architecture.md"
PATH = re.compile(r"`((?:pp_demo|tests|tools|docs|notebooks|results)/[A-Za-z0-9_./-]*)`")
CONSTANT = re.compile(r"`(_?[A-Z][A-Z0-9_]+)`")
PLACEHOLDER = re.compile(r"NN|FOLDER|test_x")


def _text(repo):
    return (repo / PAGE).read_text(encoding="utf-8")


def _recipes(text):
    """``{title: body}`` of every ``### Add ...`` section."""
    found = re.findall(r"^### (Add [^\n]+)\n(.*?)(?=^#{2,3} |\Z)", text, flags=re.M | re.S)
    return dict(found)


@pytest.mark.parametrize("page, at_least", [(PAGE, 25), ("CONTRIBUTING.md", 10)])
def test_every_path_the_page_names_exists(repo, page, at_least):
    # placeholders (nbNN.py, NN_topic.ipynb, FOLDER/test_x.py) name no one file
    paths = {p for p in PATH.findall((repo / page).read_text(encoding="utf-8")) if not PLACEHOLDER.search(p)}
    assert len(paths) > at_least  # the pattern reads the page at all
    assert sorted(p for p in paths if not (repo / p).exists()) == []


def test_the_page_has_the_four_recipes(repo):
    assert sorted(_recipes(_text(repo))) == ["Add a family", "Add a pooling rule", "Add a schedule", "Add an exercise"]


@pytest.mark.parametrize("title", ["Add a family", "Add a pooling rule", "Add a schedule", "Add an exercise"])
def test_each_recipe_counts_its_source_files_and_its_constants_are_where_it_says(repo, title):
    body = _recipes(_text(repo))[title]
    bullets = [b for b in re.split(r"\n(?=- )", body) if b.startswith("- `")]
    sources = set()
    for bullet in bullets:
        path = PATH.match(bullet[2:])[1]
        if path.startswith(("pp_demo/", "tools/")) and path.endswith(".py"):
            sources.add(path)
        if path.endswith(".py"):
            text = (repo / path).read_text(encoding="utf-8")
            missing = [c for c in CONSTANT.findall(bullet) if c not in text]
            assert missing == [], f"{title}: {path} has no {missing}"
    # "Source files: 1 (+3 when ...)": the plain case, then what a variant adds
    counted = re.search(r"^Source files: (\d+)(?: \(\+(\d+))?", body, flags=re.M)
    said = int(counted[1]) + int(counted[2] or 0)
    assert said == len(sources), f"{title}: the page says {said}, it lists {sorted(sources)}"
