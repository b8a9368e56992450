"""docs/architecture.md against the tree: the paths it names exist (CONTRIBUTING.md's too),
and the constants each recipe points at are in the file it names."""

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
def test_the_constants_each_recipe_points_at_are_in_the_file_it_names(repo, title):
    # (which files a recipe must touch is checked by following it: tests/repo/test_recipes.py)
    body = _recipes(_text(repo))[title]
    bullets = [b.split("\n\n")[0] for b in re.split(r"\n(?=- )", body) if b.startswith("- `")]
    assert bullets, f"{title}: no bullets"
    for bullet in bullets:
        named = PATH.match(bullet[2:])
        path = named[1] if named else bullet[3 : bullet.index("`", 3)]  # README.md: no folder
        if path.endswith(".py"):
            text = (repo / path).read_text(encoding="utf-8")
            missing = [c for c in CONSTANT.findall(bullet) if c not in text]
            assert missing == [], f"{title}: {path} has no {missing}"
