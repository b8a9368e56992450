"""Browser tests: Debian's chromium driven by Playwright (``make test-browser``).

They need chromium and a free port or two, so ``pytest tests`` (``make test``) does not
collect them: only ``PP_DEMO_BROWSER=1``, which ``make test-browser`` sets, does.

One JupyterLab serves every test that needs one (``lab``, for the session: starting one costs
about 5 s of the suite's budget), started as ``make lab`` starts it.
"""

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import time
import urllib.request

import pytest

from pp_demo.workshop.lab import lab_command
from pp_demo.workshop.workspace import prepare_workspace
from tools.agenda import ROOM_NOTEBOOKS

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAB_NOTEBOOKS = (*ROOM_NOTEBOOKS, "04")  # the room's, and the day's with the explorer
STORED = "stored"  # the served copy's folder of the repository's notebooks, outputs kept (beside notebooks/)

# A 1366x768 laptop's screen, less Chromium's own bars: its tab strip (40 px) and toolbar (47 px),
# 87 px in all, measured on Chromium 156 in a window filling a 1366x768 X screen (Xvfb, no window
# manager, no bookmarks bar: window.outerHeight - window.innerHeight, and a screenshot of the screen). Lab's
# menu bar, tab bar, notebook toolbar and status bar take 121 px more, so Lab's notebook area is
# 768 - 87 - 121 = 560 px tall. A taskbar or a system's top bar (Windows' 40 to 48 px, GNOME's
# 32 px) takes more still. A 1366x768 page with no browser bar at all (full screen, F11) would have
# 768 - 121 = 647 px.
LAPTOP = {"width": 1366, "height": 768 - 87}

if not os.environ.get("PP_DEMO_BROWSER"):
    collect_ignore_glob = ["test_*.py"]

# Nothing but the pages under test may use the network: no updates, sync or field trials.
QUIET_FLAGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-domain-reliability",
    "--no-first-run",
    "--no-default-browser-check",
]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail(
            "chromium is not installed: run `make test-browser` as root or `apt-get install chromium`", pytrace=False
        )
    args = QUIET_FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else [])  # root has no user namespace sandbox
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=args)
        yield chromium
        chromium.close()


@contextlib.contextmanager
def watched_page(browser, viewport):
    """A page in a context of its own that records console errors, page errors and every requested URL."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.problems, page.urls = [], []
    page.on("console", lambda msg: msg.type == "error" and page.problems.append(f"console: {msg.text}"))
    page.on("pageerror", lambda error: page.problems.append(f"page error: {error}"))
    page.on("request", lambda request: page.urls.append(request.url))
    page.on(
        "response",
        lambda response: response.status >= 400 and page.problems.append(f"HTTP {response.status}: {response.url}"),
    )
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def page(browser):
    """A fresh page, 1280x900, that records console errors, page errors and every requested URL."""
    with watched_page(browser, {"width": 1280, "height": 900}) as page:
        yield page


@pytest.fixture(scope="module")
def laptop_page(browser):
    """One page for a test file, at a 1366x768 laptop's size (``LAPTOP``), that records console
    errors, page errors and every requested URL."""
    with watched_page(browser, LAPTOP) as page:
        yield page


def _wait_ready(process, url, log):
    for _ in range(240):
        if process.poll() is not None:
            pytest.fail(f"jupyter lab exited with {process.returncode}: {log.read_text()[-2000:]}", pytrace=False)
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"jupyter lab did not answer: {log.read_text()[-2000:]}", pytrace=False)


def notebook_file(number):
    """The file name of notebook ``number`` ("01") in notebooks/."""
    (path,) = (ROOT / "notebooks").glob(f"{number}_*.ipynb")
    return path.name


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """``(base URL, token)`` of a JupyterLab serving a copy of the checkout: the room's notebooks
    and 04 in notebooks/, docs/, the working copy workspace/ that `make lab` prepares (outputs
    cleared), and stored/, a second copy of those notebooks with their outputs, so the served
    notebooks/ may be run and the stored outputs are still there to measure. The checkout itself
    is never saved over.

    The server starts as ``make lab`` starts it (its own command: no browser, ``--allow-root`` as
    root) on 127.0.0.1, a free port and a token, with its own JUPYTER_* folders; it is stopped by
    its own pid."""
    tmp = tmp_path_factory.mktemp("lab")
    home = tmp / "checkout"
    for folder in ("notebooks", STORED):
        (home / folder).mkdir(parents=True)
        for number in LAB_NOTEBOOKS:
            shutil.copy(ROOT / "notebooks" / notebook_file(number), home / folder)
    shutil.copytree(ROOT / "docs", home / "docs")
    prepare_workspace(home)  # as make lab does: the working copy Lab opens at
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        **{
            name: str(tmp / name.lower())
            for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")
        },
    )
    # Lab's first start asks in a corner toast whether to fetch Jupyter's news: answered "no" here,
    # so the toast covers no figure in a screenshot (and nothing is fetched).
    news = tmp / "jupyter_config_dir" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    # make lab's own command (as root --allow-root; no display here, so --no-browser)
    command, _, url = lab_command(["--LabApp.expose_app_in_browser=True"], environ={}, root=home)
    base, token = url.split("/lab/tree/workspace?token=")
    log = tmp / "lab.log"
    with open(log, "w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_ready(process, f"{base}/api/status?token={token}", log)
        yield base, token
    finally:
        process.terminate()  # this server only, by its pid; it shuts its kernels down
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
