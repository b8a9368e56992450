"""The room's notebooks (01, 02, 03, 05: ``tools.agenda.ROOM_NOTEBOOKS``) in JupyterLab, in Chromium
on a 1366x768 laptop (``LAPTOP``, conftest.py), as the room needs them:

- nothing on screen answers a prediction: a notebook an attendee opens from workspace/, the working
  copy ``make lab`` opens at, shows no output before its cells are run;
- every figure and output fits Lab's notebook area, so a figure's legend and last panel show together;
- a glossary link lands on its entry, not at the top of the glossary.

One Lab serves them all (fixture ``lab``) and one page at the laptop's size shows it, opened at
workspace/ as ``make lab`` opens it; each test opens its notebook there, as an attendee does.
Screenshots go to results/tmp/room_*.png, for a reader to check by eye.
"""

import contextlib
import json
import pathlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tools.agenda import ROOM_NOTEBOOKS

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "tmp"
TIMEOUT_MS = 60_000
PREDICT = "Predict before you read on"


def _file(number):
    (path,) = (ROOT / "notebooks").glob(f"{number}_*.ipynb")
    return path.name


@pytest.fixture(scope="module")
def room(laptop_page, lab):
    """The laptop's page on Lab's file browser at workspace/, where ``make lab`` opens."""
    base, token = lab
    page = laptop_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/workspace?token={token}&reset")  # reset: no tabs another test left open
    page.wait_for_selector(f".jp-DirListing-item[title*='{_file('01')}']")
    SHOTS.mkdir(parents=True, exist_ok=True)
    return page


def _wait_open(page, path):
    """Wait until ``path`` is the current tab's notebook, loaded, with every cell drawn in the DOM."""
    page.wait_for_function(
        """path => {
          const panel = window.jupyterapp.shell.currentWidget;
          return panel?.context?.path === path && panel.context.isReady
            && panel.content.widgets.length === panel.content.model.cells.length;
        }""",
        arg=path,
    )


def _open(page, path):
    """Open ``path`` as a double-click in the file browser does, and wait for it (the command is
    not awaited: its promise may outlive what it starts, and evaluate has no timeout)."""
    page.evaluate("path => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
    _wait_open(page, path)


def _close(page):
    """Close the current notebook and shut its kernel down: the next notebook starts on an idle machine."""
    page.evaluate(
        """async () => {
          const panel = window.jupyterapp.shell.currentWidget;
          await panel.sessionContext.shutdown();
          panel.dispose();
        }"""
    )


# What the notebook shows: outputs in its model (cells not drawn yet count too) and in the DOM.
_OUTPUTS = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  let code = 0, outputs = 0, run = 0;
  for (let i = 0; i < notebook.model.cells.length; i++) {
    const cell = notebook.model.cells.get(i);
    if (cell.type !== 'code') continue;
    code += 1;
    outputs += cell.outputs.length;
    run += cell.executionCount !== null;
  }
  return {code, outputs, run, drawn: notebook.node.querySelectorAll('.jp-OutputArea-output').length};
}"""

_SCROLL_TO_SOURCE = """async text => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  for (let i = 0; i < notebook.model.cells.length; i++) {
    if (notebook.model.cells.get(i).sharedModel.getSource().includes(text)) {
      await notebook.scrollToItem(i, 'start');
      return i;
    }
  }
  return -1;
}"""

# Every output's height as drawn (the output and its children: an image, a pre, a table), each
# cell scrolled into view first, so it is drawn whatever Lab's windowing mode; and the notebook
# area's height, the scrolling panel the cells show in.
_HEIGHTS = """async () => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const area = notebook.node.querySelector('.jp-WindowedPanel-outer') ?? notebook.node;
  const outputs = [];
  for (let i = 0; i < notebook.model.cells.length; i++) {
    const cell = notebook.model.cells.get(i);
    if (cell.type !== 'code' || cell.outputs.length === 0) continue;
    await notebook.scrollToItem(i, 'start');
    const node = notebook.widgets[i].node;
    await Promise.all([...node.querySelectorAll('img')].map(img => img.decode().catch(() => null)));
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    node.querySelectorAll('.jp-OutputArea-output').forEach((output, n) => {
      const heights = [output, ...output.children].map(e => e.getBoundingClientRect().height);
      outputs.push({cell: i, output: n, height: Math.round(Math.max(...heights)),
                    kind: output.dataset.mimeType ?? output.firstElementChild?.tagName.toLowerCase()});
    });
  }
  return {area: area.clientHeight, outputs};
}"""

_SHOW_OUTPUT = """({cell, output}) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.widgets[cell].node.querySelectorAll('.jp-OutputArea-output')[output].scrollIntoView({block: 'start'});
}"""


def test_a_notebook_opened_from_the_working_copy_shows_no_answer_before_it_is_run(room):
    """Notebook 01 asks "Predict before you read on"; stored, its outputs include the review table
    that answers it, a few cells below. Opened from workspace/ as an attendee opens it (a
    double-click in Lab's file browser), no cell has an output: none in the notebook's model (cells
    Lab has not drawn yet count too), none drawn, none run; and the question is on screen."""
    name = _file("01")
    stored = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    asked = next(i for i, cell in enumerate(stored) if PREDICT in "".join(cell["source"]))
    assert any(cell.get("outputs") for cell in stored[asked:]), "the stored notebook answers nothing: no test here"

    room.locator(f".jp-DirListing-item[title*='{name}']").dblclick()
    _wait_open(room, f"workspace/{name}")
    shown = room.evaluate(_OUTPUTS)
    assert shown["code"] >= 10 and (shown["outputs"], shown["drawn"], shown["run"]) == (0, 0, 0), shown
    assert room.evaluate(_SCROLL_TO_SOURCE, PREDICT) == asked
    prompt = room.locator(".jp-RenderedMarkdown", has_text=PREDICT)
    prompt.wait_for()
    assert prompt.is_visible()
    room.screenshot(path=str(SHOTS / "room_01_workspace_predict.png"))
    _close(room)


@pytest.mark.parametrize("number", [*ROOM_NOTEBOOKS, "04"], ids=lambda number: f"notebook {number}")
def test_every_stored_output_fits_the_laptops_notebook_area(room, number):
    """Each room notebook (and 04, the day's) as the repository stores it, outputs and all, opened
    in Lab at the laptop's size with the file browser closed, the widest notebook column, where
    figures show at their full stored size: every output is at most as tall as Lab's notebook area,
    so a figure's legend and last panel show together. Screenshot: the tallest output, scrolled to
    the top of the area. (A figure's height limit is ``pp_demo.figures.palette.MAX_HEIGHT_IN``.)"""
    name = _file(number)
    room.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    _open(room, f"stored/{name}")
    measured = room.evaluate(_HEIGHTS)
    area, outputs = measured["area"], measured["outputs"]
    assert outputs, f"{name} stores no output: nothing was measured"
    tallest = max(outputs, key=lambda output: output["height"])
    room.evaluate(_SHOW_OUTPUT, tallest)
    room.screenshot(path=str(SHOTS / f"room_{number}_tallest_output.png"))
    _close(room)
    print(f"{name}: notebook area {area} px; tallest output: cell {tallest['cell']}, {tallest['height']} px")
    too_tall = [f"cell {o['cell']}: {o['height']} px ({o['kind']})" for o in outputs if o["height"] > area]
    assert not too_tall, f"{name}: taller than Lab's notebook area ({area} px at {room.viewport_size}): {too_tall}"


def test_the_glossary_link_of_notebook_05_lands_on_its_entry(room):
    """Notebook 05's first cell links "1F1B" to ../docs/glossary.md#1f1b. Lab opens the glossary and
    scrolls to the element whose id is the fragment: an id Lab gives a heading keeps the heading's
    case (1F1B), so without an anchor of that lower-case name the glossary opens at its top, far
    from the entry, and the reader is left to look for it."""
    name = _file("05")
    _open(room, f"workspace/{name}")
    # Lab draws the link to the served file: /files/docs/glossary.md?_xsrf=...#1f1b
    room.locator(".jp-RenderedMarkdown a[href*='/docs/glossary.md'][href$='#1f1b']").first.click()
    room.wait_for_function(
        """() => {
          const viewer = window.jupyterapp.shell.currentWidget;
          return viewer?.context?.path === 'docs/glossary.md' && viewer.node.querySelector('h3') !== null;
        }"""
    )
    where = """() => {
      const viewer = window.jupyterapp.shell.currentWidget.node;
      const heading = [...viewer.querySelectorAll('h1, h2, h3, h4')]
        .find(h => h.textContent.replace('¶', '').trim() === '1F1B');
      const shown = viewer.getBoundingClientRect(), at = heading.getBoundingClientRect();
      return {top: Math.round(at.top), bottom: Math.round(at.bottom), from: Math.round(shown.top),
              to: Math.round(shown.bottom), scrolled: viewer.scrollTop,
              shown: at.top >= shown.top && at.bottom <= shown.bottom};
    }"""
    with contextlib.suppress(PlaywrightTimeout):  # Lab scrolls to the fragment once the page is drawn
        room.wait_for_function(f"() => ({where})().shown", timeout=3_000)  # else the assertion says where
    landed = room.evaluate(where)
    room.screenshot(path=str(SHOTS / "room_05_glossary_link.png"))
    assert landed["shown"], f"the 1F1B heading is not in the glossary's visible area: {landed}"
