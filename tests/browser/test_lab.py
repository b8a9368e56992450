"""Notebook 04 in a real JupyterLab, driven like a learner would: run every cell from the
UI, then type a row into the explorer and read the answer it shows.

The server (fixture ``lab``, conftest.py) starts as ``make lab`` starts it, serving a copy of
the checkout (so the stored notebook is never saved over). Lab opens at workspace/, and the
notebook's glossary link opens the glossary.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "tmp"
NOTEBOOK = "04_pad_equals_eos.ipynb"  # the notebook with the explorer
TIMEOUT_MS = 120_000


# Read from the notebook model, so cells scrolled out of view count too.
_STATE = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const code = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    const outputs = cell.outputs.toJSON();
    code.push({count: cell.executionCount,
               bad: outputs.filter(o => o.output_type === 'error' || o.name === 'stderr').length});
  }
  return code;
}"""


_KERNEL_IDLE = "() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'"
_SCROLL_TO_EXPLORER = """async () => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const cells = notebook.model.cells;
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).sharedModel.getSource().includes('pp-explore-ids')) {
      notebook.activeCellIndex = i;
      await notebook.scrollToItem(i, 'start');
    }
  }
}"""


def _run(page, command):
    # not awaited: a command's promise may outlive what it starts, and evaluate has no timeout
    page.evaluate(f"() => {{ window.jupyterapp.commands.execute('{command}'); }}")


def _answer(page):
    return page.locator(".pp-explore-table").inner_text()


def _lands_on(text):
    """``{rule: lands on}`` from the explorer's table."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+-?\d+\s+(\d+)\s", text, flags=re.M)}


def _start_kernel(page):
    """Wait for the notebook's kernel; accept the kernel dialog Lab may show first."""
    page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.sessionContext !== undefined")
    page.wait_for_function(f"() => document.querySelector('.jp-Dialog') !== null || ({_KERNEL_IDLE})()")
    if page.locator(".jp-Dialog").count():
        page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_function(_KERNEL_IDLE)


def test_run_all_then_type_a_row(page, lab):
    base, token = lab
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/notebooks/{NOTEBOOK}?token={token}&reset")
    _start_kernel(page)
    _run(page, "notebook:clear-all-cell-outputs")  # so every count seen below is from this run
    page.wait_for_function(f"() => ({_STATE})().every(c => c.count === null)")
    _run(page, "notebook:run-all-cells")
    try:
        page.wait_for_function(f"() => ({_STATE})().every(c => c.count !== null) && ({_KERNEL_IDLE})()")
    finally:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab_run_all.png"))
    cells = page.evaluate(_STATE)
    assert len(cells) >= 20 and all(cell["bad"] == 0 for cell in cells), cells
    assert page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    page.evaluate(_SCROLL_TO_EXPLORER)
    # Lab draws a widget once its cell is in view: wait for the explorer's table to be drawn
    page.wait_for_function("() => document.querySelector('.pp-explore-table')?.innerText.includes('count')")

    # The explorer starts on [5,0,7,8,0,0]; review table: count 2, first pad mod L 0, fix 3.
    start = _lands_on(_answer(page))
    assert (start["count"], start["first_pad_mod"], start["rightmost_non_pad"]) == (2, 0, 3)
    # Type the review row [0,0,5,0,7,8]: count 2, first pad mod L 5, fix 5; the mask's last 1 at 5.
    page.locator(".pp-explore-ids input").fill("0 0 5 0 7 8")
    page.locator(".pp-explore-mask input").fill("0 0 1 1 1 1")
    page.wait_for_function("() => document.querySelector('.pp-explore-table').innerText.includes('mask [0,0,1,1,1,1]')")
    shown = _answer(page)
    typed = _lands_on(shown)
    assert (typed["count"], typed["first_pad_mod"], typed["rightmost_non_pad"]) == (2, 5, 5), shown
    assert typed["rightmost_attended"] == 5 and "true last real token (from the mask): 5" in shown
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".pp-explore-table").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "lab_explorer.png"))
    # JupyterLab itself logs console errors it recovers from; an uncaught exception is a failure
    assert [p for p in page.problems if p.startswith("page error")] == []


def test_lab_opens_at_the_notebooks_and_the_glossary_link_opens_the_glossary(page, lab):
    base, token = lab
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/?token={token}")  # where `/` and the browser Lab opens go: notebooks/
    page.wait_for_selector(f".jp-DirListing-item[title*='{NOTEBOOK}']")
    assert page.url.split("?")[0].endswith("/lab/tree/workspace")
    page.goto(f"{base}/lab/tree/notebooks/{NOTEBOOK}?token={token}&reset")
    _start_kernel(page)
    link = page.locator(".jp-RenderedMarkdown a[href*='glossary.md']").first
    link.click()  # Lab opens the linked file in a tab of its own: served, so no 404
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.context?.path === 'docs/glossary.md'")
    assert not [p for p in page.problems if "404" in p and "glossary" in p], page.problems
