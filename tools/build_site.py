"""Build the read-only site (``make site``): the notebooks as HTML from their STORED outputs.

Nothing is executed: the pages show exactly what strict nbval checks. Every page is
self-contained (figures inline, no script, font or style from another host), and the folder is
too: the notebooks' links to ``../docs/glossary.md`` go to its own ``glossary.html``, to another
notebook to that notebook's page, and a link to anything else outside it stops the build. So
``site/`` can be shared on its own: open ``site/index.html``. It is the attendees' site: it holds
no answer key (the facilitator guide, ``docs/facilitator.md``, stays in the checkout).
Usage: ``python tools/build_site.py [OUT]``.

It never deletes what it did not write: OUT is a new folder, an empty one, or one it wrote before
(its marker file, ``.pp_demo_site``, lists the files it wrote, and the folder holds nothing else).
Any other folder (``notebooks``, one holding a thesis) is refused in one line, exit 2, before
anything is written; a folder it cannot write (a read-only checkout) in one line, exit 1.
"""

import html
import pathlib
import posixpath
import re
import shutil
import sys
from typing import Any

import mistune
import nbformat
from nbconvert import HTMLExporter

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEMPLATE = pathlib.Path(__file__).with_name("offline.html.j2")
STYLE = (
    "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
    "pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}td,th{padding:.3rem .6rem;vertical-align:top;"
    "border-bottom:1px solid #ddd;text-align:left}table{border-collapse:collapse}td ul{margin:0}"
)


GLOSSARY = pathlib.Path("docs") / "glossary.md"
# A markdown link's target: [text](target) or [text](target "title")
LINK = re.compile(r"(\]\()([^)\s]+)")


MARKER = ".pp_demo_site"
MARKER_HEAD = "written by tools/build_site.py; it replaces only the files listed below"


class FolderNotOurs(Exception):
    """OUT holds something the builder did not write: the build stops before touching it (exit 2)."""


class LinkOutsideSite(SystemExit):
    """A page links a file the site does not hold: the build stops, naming the page and the link."""


def site_link(target: str, page: str, notebooks: set[str]) -> str:
    """Where ``target``, a link in ``page`` (a path from the checkout), points inside the site:
    the glossary to ``glossary.html``, a notebook to its page; a link to another host or an anchor
    as it is. Anything else would leave the site: ``LinkOutsideSite``."""
    if re.match(r"[a-zA-Z][a-zA-Z+.-]*:", target) or target.startswith("#"):
        return target
    file, hash_, anchor = target.partition("#")
    path = pathlib.PurePosixPath(posixpath.normpath(posixpath.join(posixpath.dirname(page), file)))
    if path == pathlib.PurePosixPath(GLOSSARY.as_posix()):
        return f"glossary.html{hash_}{anchor}"
    if path.parent == pathlib.PurePosixPath("notebooks") and path.stem in notebooks and path.suffix == ".ipynb":
        return f"{path.stem}.html{hash_}{anchor}"
    raise LinkOutsideSite(f"{page} links {target}, which the site does not hold: link the glossary or a notebook")


def _site_links(text: str, page: str, notebooks: set[str]) -> str:
    """``text`` (markdown from ``page``) with every link pointing inside the site (``site_link``)."""
    return LINK.sub(lambda m: m[1] + site_link(m[2], page, notebooks), text)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it, which the notebooks link (``pad id`` -> ``pad-id``)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _heading_ids(page: str) -> str:
    """Every heading of ``page`` (HTML) with the id GitHub gives it, so ``glossary.html#stage`` lands.
    An id the page already gives explicitly (``### <a id="1f1b"></a>1F1B``, the anchor the glossary
    writes for JupyterLab) is not given twice: the anchor already lands there."""
    given = set(re.findall(r'\sid="([^"]*)"', page))

    def named(match: re.Match[str]) -> str:
        text = html.unescape(re.sub(r"<[^>]+>", "", match[2]))
        if slug(text) in given:
            return match[0]
        return f'<h{match[1]} id="{html.escape(slug(text))}">{match[2]}</h{match[1]}>'

    return re.sub(r"<h([1-6])>(.*?)</h\1>", named, page)


def _markdown(text: str) -> str:
    """Markdown to HTML (mistune's default renderer returns text)."""
    return str(mistune.html(text))


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def _alt_texts(nb: Any) -> None:
    """Give every stored figure alt text: the lead sentence of the markdown cell above it."""
    context = nb.metadata.get("title", "the notebook")
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            prose = " ".join(line for line in cell.source.splitlines() if not line.startswith("#"))
            plain = re.sub(r"[*`_\[\]]", "", prose).strip()
            context = re.split(r"(?<=\.)\s", plain, maxsplit=1)[0] or context
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                output.setdefault("metadata", {})["pp_alt"] = f"Figure: {context}"


def notebook_page(path: pathlib.Path, exporter: HTMLExporter, notebooks: set[str] | None = None) -> str:
    nb = nbformat.read(path, as_version=4)
    _alt_texts(nb)
    notebooks = {path.stem} if notebooks is None else notebooks
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _site_links(cell.source, f"notebooks/{path.name}", notebooks)
    body, _ = exporter.from_notebook_node(nb, resources={"pp_ipynb": path.name})
    return body


def summary(path: pathlib.Path) -> dict[str, Any]:
    """Title, goals (the bullets under "What you will learn") and minutes of one notebook."""
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source if nb.cells and nb.cells[0].cell_type == "markdown" else ""
    title = next((line.lstrip("# ").strip() for line in first.splitlines() if line.startswith("# ")), path.stem)
    learn = first.split("What you will learn", 1)[-1] if "What you will learn" in first else ""
    goals = []
    for line in learn.splitlines():
        if line.startswith("- "):
            goals.append(line[2:].strip())
        elif goals and line.startswith(" ") and line.strip():  # a goal wrapped onto the next line
            goals[-1] += " " + line.strip()
    episode = nb.metadata.get("episode", {})
    minutes = [
        f"{episode[key]} min {label}"
        for key, label in (("teaching_minutes", "teaching"), ("exercise_minutes", "exercises"))
        if key in episode
    ]
    return {"title": title, "goals": goals, "minutes": ", ".join(minutes)}


def _readme_parts(readme: str) -> tuple[str, list[str]]:
    """The README's opening (up to its first section) and its shell command blocks."""
    intro = readme.split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    return intro, commands


def index_page(notebooks: list[pathlib.Path], readme: str) -> str:
    intro, commands = _readme_parts(readme)
    stems = {path.stem for path in notebooks}
    intro = _site_links(intro, "README.md", stems)
    rows = []
    for path in notebooks:
        info = summary(path)
        # a goal may link a glossary term, written from the notebook's folder: the site's own page here
        goals = "".join(
            f"<li>{_markdown(_site_links(goal, f'notebooks/{path.name}', stems)).strip()[3:-4]}</li>"
            for goal in info["goals"]
        )
        minutes = f"<br><small>{html.escape(info['minutes'])}</small>" if info["minutes"] else ""
        rows.append(
            f'<tr><td><a href="{path.stem}.html">{html.escape(info["title"])}</a>{minutes}</td>'
            f"<td><ul>{goals}</ul></td></tr>"
        )
    parts = [
        _markdown(intro),
        "<h2>The notebooks, in order</h2>",
        "<p>Each page shows the notebook as stored, outputs included; its link downloads the "
        ".ipynb to run it yourself.</p>",
        "<table><tr><th>notebook</th><th>what you will learn</th></tr>" + "".join(rows) + "</table>",
    ]
    parts.append('<p>The words of the trade: <a href="glossary.html">the glossary</a>.</p>')
    parts.append("<h2>Commands</h2>")
    parts += [f"<pre>{html.escape(block)}</pre>" for block in commands]
    return _page("pp_demo workbook", "\n".join(parts))


def _ours(out: pathlib.Path) -> set[str]:
    """The names the marker of ``out`` lists (what an earlier build wrote); none without one."""
    marker = out / MARKER
    if not marker.is_file():
        return set()
    lines = marker.read_text(encoding="utf-8").splitlines()
    return set(lines[1:]) if lines[:1] == [MARKER_HEAD] else set()


def claim(out: pathlib.Path, names: list[str]) -> None:
    """Make ``out`` ready for ``names``: a new folder, an empty one, or one holding only what an
    earlier build wrote (whose files are removed). Anything else: ``FolderNotOurs``, nothing
    touched, since a user's file in it (or the committed notebooks) would be lost otherwise. The
    marker is written before any page, so a build stopped half-way can be run again."""
    if out.exists() and not out.is_dir():
        raise FolderNotOurs(f"{out} is a file, not a folder: name a new or empty folder for the site")
    present = {entry.name: entry for entry in out.iterdir()} if out.is_dir() else {}
    ours = _ours(out)
    foreign = sorted(name for name, entry in present.items() if name != MARKER and (name not in ours or entry.is_dir()))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise FolderNotOurs(
            f"{out} holds {shown}, which the site builder did not write: it writes only into a new or empty "
            "folder, or one it wrote before; name another folder, or move those files away yourself"
        )
    out.mkdir(parents=True, exist_ok=True)
    for name in ours & set(present):
        present[name].unlink()
    (out / MARKER).write_text("\n".join([MARKER_HEAD, *names]) + "\n", encoding="utf-8")


def build(out: pathlib.Path, root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Write the site into ``out`` (``claim``: a new or empty folder, or its own); returns the
    pages written."""
    notebooks = sorted((root / "notebooks").glob("[0-9]*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no notebooks/[0-9]*.ipynb under {root}")
    names = [n for path in notebooks for n in (path.name, f"{path.stem}.html")] + ["glossary.html", "index.html"]
    claim(out, names)
    exporter = HTMLExporter(template_name="lab", template_file=str(TEMPLATE))
    stems = {path.stem for path in notebooks}
    pages = []
    for path in notebooks:
        shutil.copy(path, out / path.name)
        pages.append(out / f"{path.stem}.html")
        pages[-1].write_text(notebook_page(path, exporter, stems), encoding="utf-8")
    glossary = _site_links((root / GLOSSARY).read_text(encoding="utf-8"), GLOSSARY.as_posix(), stems)
    pages.append(out / "glossary.html")
    nav = '<nav><a href="index.html">all notebooks</a></nav>'
    pages[-1].write_text(_page("Glossary", nav + _heading_ids(_markdown(glossary))), encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    (out / "index.html").write_text(index_page(notebooks, readme), encoding="utf-8")
    return [out / "index.html"] + pages


def main(argv: list[str]) -> int:
    """The command: one line on stderr for a folder it may not or cannot write, never a traceback."""
    if len(argv) > 1 or argv[:1] in (["-h"], ["--help"]):
        print("usage: python tools/build_site.py [OUT]  (default: site)", file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    target = pathlib.Path(argv[0] if argv else "site")
    try:
        written = build(target)
    except FolderNotOurs as error:
        print(f"build_site: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        why = error.strerror or type(error).__name__
        print(
            f"build_site: error: cannot write the site into {target}/: {why}; name a folder you can write",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {len(written)} pages into {target}/ (open {target}/index.html)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
