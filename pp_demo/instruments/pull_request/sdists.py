"""ColossalAI source trees for ``verify-pr``: the two sdists, extracted and patched as variants.

The pull request is judged on ColossalAI's released source, not on pp_demo's model of it, in two
sdists: ``colossalai==0.5.0`` (eight pooling forwards) and ``colossalai-nightly==2025.7.12``
(the registry's only build with ``qwen3.py``: nine). Each is found in a cache folder, else
anywhere under a wheelhouse folder (``make wheelhouse`` puts them there), else fetched with
``pip download``. Its ``colossalai`` package is extracted once and copied into a folder per
variant, patched with diffs from ``pp_demo/instruments/pull_request/patches/`` (``patch -p1``).
Nothing is installed: a variant is imported by putting its folder on the path.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
from typing import Any

__all__ = ["SDISTS", "VARIANTS", "PATCHES", "CHANGE_FILES", "FOLLOW_UP_FILES", "default_cache"]
__all__ += ["find_sdist", "variant_tree", "split_patch", "extract_package", "NoSdist"]

# Package data (pyproject: [tool.setuptools.package-data]): the one copy, shipped in the wheel.
PATCHES = pathlib.Path(__file__).resolve().parent / "patches"
CHANGE = "0001-rightmost-non-pad-llama-qwen2-opt.patch"
FOLLOW_UP = "0002-rightmost-non-pad-first-pad-forwards.patch"
# The modeling files each diff touches, as history wrote them (the pull request's change, then its
# follow-up): the 0.5.0 forwards that count the non-pad ids, and those that look for the first pad
# id. Literals, not read from the families table (it may grow): tests check them against its
# colossalai_rule.
CHANGE_FILES = ("llama", "qwen2", "opt")
FOLLOW_UP_FILES = ("mistral", "gpt2", "bloom", "falcon", "gptj")

# requirement -> the sdist's file stem (pip may normalise the dash of the nightly's name)
SDISTS = {"colossalai==0.5.0": "colossalai-0.5.0", "colossalai-nightly==2025.7.12": "colossalai-nightly-2025.7.12"}


# variant -> [(patch file, the modeling files of it to apply)]
VARIANTS: dict[str, list[tuple[str, list[str]]]] = {
    "unpatched": [],
    "change": [(CHANGE, list(CHANGE_FILES))],
    **{f"change minus {family}.py": [(CHANGE, [f for f in CHANGE_FILES if f != family])] for family in CHANGE_FILES},
    "change + follow-up": [(CHANGE, list(CHANGE_FILES)), (FOLLOW_UP, list(FOLLOW_UP_FILES))],
}


class NoSdist(RuntimeError):
    """An sdist is neither cached nor in the wheelhouse, and pip could not download it."""


def default_cache() -> pathlib.Path:
    """``$PP_DEMO_CACHE``, else ``~/.cache/pp_demo/colossalai`` (outside the repository)."""
    return pathlib.Path(os.environ.get("PP_DEMO_CACHE") or pathlib.Path.home() / ".cache/pp_demo/colossalai")


def _look_in(folder: str | pathlib.Path | None, stem: str, recursive: bool) -> pathlib.Path | None:
    if folder is None or not pathlib.Path(folder).is_dir():
        return None
    # pip may write the nightly's name with an underscore
    names = sorted({f"{stem}.tar.gz", f"{stem.replace('colossalai-nightly', 'colossalai_nightly')}.tar.gz"})
    look = pathlib.Path(folder).rglob if recursive else pathlib.Path(folder).glob
    return next((hit for name in names for hit in sorted(look(name))), None)


def find_sdist(
    requirement: str, cache: pathlib.Path, wheelhouse: str | pathlib.Path | None = None, timeout: int = 120
) -> pathlib.Path:
    """The sdist file of ``requirement``: cached, else in the wheelhouse, else downloaded to the cache."""
    stem = SDISTS[requirement]
    found = _look_in(cache, stem, False) or _look_in(wheelhouse, stem, True)
    if found:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", requirement]
    command += ["-d", str(cache)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        done = None
    found = _look_in(cache, stem, False)
    if found is None:
        why = "timed out" if done is None else (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise NoSdist(
            f"no {stem}.tar.gz in the cache ({cache}) or the wheelhouse ({wheelhouse}), and "
            f"`pip download {requirement}` failed (no network?): {why}"
        )
    return found


def split_patch(text: str) -> dict[str, str]:
    """A unified diff cut into ``{modeling file stem: its part}``, so variants take single files."""
    parts, current = {}, None
    for line in text.splitlines(keepends=True):
        if line.startswith("--- a/"):
            current = pathlib.PurePosixPath(line[6:].split()[0]).stem
            parts[current] = ""
        if current is not None:
            parts[current] += line
    return parts


def extract_package(sdist: pathlib.Path, stem: str, into: pathlib.Path) -> None:
    """The sdist's ``colossalai`` package only, into ``into/colossalai``."""
    prefix = f"{stem}/colossalai/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        if not members:
            raise NoSdist(f"{sdist.name} holds no {prefix} folder: not a ColossalAI sdist")
        for member in members:
            member.name = member.name[len(stem) + 1 :]
        # the "data" filter (no links out of the folder, no odd modes) where this Python has it;
        # the members are plain files and folders under one prefix either way
        safe: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(into, members=members, **safe)


def variant_tree(
    requirement: str, variant: str, cache: pathlib.Path, wheelhouse: str | pathlib.Path | None = None
) -> pathlib.Path:
    """The folder holding ``colossalai/`` of ``variant``, built in the cache on first use.

    A folder is rebuilt when the diff it was made from changed (kept in ``.applied``).
    """
    stem = SDISTS[requirement]
    tree = cache / "trees" / stem / variant.replace(" ", "_").replace("+", "plus")
    parts = [(split_patch((PATCHES / patch_file).read_text()), files) for patch_file, files in VARIANTS[variant]]
    wanted = "".join(part[f] for part, files in parts for f in files)  # the variant's diff
    marker = tree / ".applied"
    if marker.is_file() and marker.read_text() == wanted:
        return tree
    sdist = find_sdist(requirement, cache, wheelhouse)
    building = tree.with_name(tree.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    extract_package(sdist, stem, building)
    if wanted:
        done = subprocess.run(
            ["patch", "-p1", "--quiet", "--forward"], input=wanted, text=True, cwd=building, capture_output=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"patch -p1 failed on {stem} ({variant}): {done.stdout.strip()} {done.stderr.strip()}")
    (building / ".applied").write_text(wanted)
    shutil.rmtree(tree, ignore_errors=True)
    building.rename(tree)
    return tree
