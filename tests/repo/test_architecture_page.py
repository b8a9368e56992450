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
    # (which files a recipe must touch is checked by following it: tests/repo/recipes/)
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


# The package in parts by who they are for, each a list of folders and modules (a module belongs to
# the longest entry its path starts with). docs/architecture.md's "Size" table states each part's lines.
SPLIT = {
    "the core": ["pp_demo/__init__.py", "pp_demo/errors.py", "pp_demo/bounds.py", "pp_demo/core.py"],
    "the ranks": ["pp_demo/ranks/"],
    "the checker": ["pp_demo/verify/", "pp_demo/deepspeed/"],
    "the notebooks' needs": [
        "pp_demo/pooling/",
        "pp_demo/figures/",
        "pp_demo/exercises/",
        "pp_demo/training/",
        "pp_demo/colossalai/",
        "pp_demo/records/",
        "pp_demo/workshop/explorer.py",
        "pp_demo/workshop/tokenizer.py",
        "pp_demo/workshop/cell_errors.py",
    ],
    "the room and the commands": ["pp_demo/", "pp_demo/workshop/", "pp_demo/cli/"],
    "instruments": ["pp_demo/instruments/"],
}
PARTS = "|".join(re.escape(part) for part in SPLIT)
SIZE_ROW = re.compile(rf"^\| ({PARTS}) \| [^|]+ \| (\d+\.\d)k \| (\d+) % \|$", re.M)


def _part_of(path: str) -> str:
    entries = [(entry, part) for part, listed in SPLIT.items() for entry in listed if path.startswith(entry)]
    return max(entries, key=lambda e: len(e[0]))[1]


def test_the_page_states_the_size_of_each_part_as_the_tree_has_it(repo):
    lines = {part: 0 for part in SPLIT}
    for path in sorted((repo / "pp_demo").rglob("*.py")):
        lines[_part_of(path.relative_to(repo).as_posix())] += len(path.read_text().splitlines())
    total = sum(lines.values())
    stated = {part: (float(k), int(share)) for part, k, share in SIZE_ROW.findall(_text(repo))}
    computed = {part: (round(n / 1000, 1), round(100 * n / total)) for part, n in lines.items()}
    assert stated == computed, f"the page's Size table should read {computed} (lines {lines}, total {total})"
    said_total = re.search(r"^The package is (\d+\.\d)k lines", _text(repo), flags=re.M)
    assert said_total and float(said_total[1]) == round(total / 1000, 1)


def test_each_entry_of_the_split_names_a_file_or_folder(repo):
    entries = [entry for listed in SPLIT.values() for entry in listed]
    assert sorted(e for e in entries if not (repo / e).exists()) == []
    assert len(entries) == len(set(entries))
