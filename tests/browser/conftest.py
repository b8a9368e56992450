"""Browser tests: Debian's chromium driven by Playwright (``make test-browser``).

They need chromium and a free port or two, so ``pytest tests`` (``make test``) does not
collect them: only ``PP_DEMO_BROWSER=1``, which ``make test-browser`` sets, does.
"""

import os
import shutil

import pytest

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


@pytest.fixture
def page(browser):
    """A fresh page that records console errors, page errors and every requested URL."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.problems, page.urls = [], []
    page.on("console", lambda msg: msg.type == "error" and page.problems.append(f"console: {msg.text}"))
    page.on("pageerror", lambda error: page.problems.append(f"page error: {error}"))
    page.on("request", lambda request: page.urls.append(request.url))
    page.on(
        "response",
        lambda response: response.status >= 400 and page.problems.append(f"HTTP {response.status}: {response.url}"),
    )
    yield page
    context.close()
