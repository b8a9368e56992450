"""The static site as a reader sees it: built from the stored outputs, served from
127.0.0.1, every page from the index loads with no error and no request to another host,
and every figure decodes and has alt text."""

import functools
import http.server
import json
import pathlib
import re
import threading
from urllib.parse import urljoin, urlparse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "tmp"


def _builder():
    from tools import build_site

    return build_site


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site_url(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    _builder().build(out)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _stored_figures():
    notebooks = [json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "notebooks").glob("[0-9]*.ipynb")]
    return sum(
        "image/png" in output.get("data", {})
        for nb in notebooks
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
    )


def _local_links(page, base):
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
    return sorted({urljoin(base, h) for h in hrefs if not urlparse(h).scheme and not h.startswith("#")})


def _check_page(page, url):
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: HTTP {response and response.status}"
    images = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => ({ok: i.complete && i.naturalWidth > 0, alt: i.getAttribute('alt') || ''}))"
    )
    assert all(image["ok"] for image in images), f"{url}: an image did not decode"
    assert all(image["alt"].strip() for image in images), f"{url}: an image has no alt text"
    return len(images)


def test_every_page_loads_offline_with_its_figures(page, site_url):
    _check_page(page, site_url + "index.html")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "site_index.png"), full_page=True)
    links = _local_links(page, site_url)
    pages = [link for link in links if link.endswith(".html")]
    downloads = [link for link in links if link.endswith(".ipynb")]
    assert len(pages) >= 7, f"the index links {len(pages)} pages: {pages}"
    figures = 0
    for url in pages:
        figures += _check_page(page, url)
        downloads += [link for link in _local_links(page, url) if link.endswith(".ipynb")]
        if re.search(r"/\d\d_[^/]+\.html$", url):  # a notebook page links its own .ipynb
            assert url.removesuffix(".html") + ".ipynb" in downloads, f"{url} has no link to its .ipynb"
    assert figures == _stored_figures(), "the pages do not show every stored figure"
    for url in set(downloads):  # the .ipynb behind each page is there to download
        assert page.request.get(url).ok, f"{url} is missing"
    assert page.problems == []
    elsewhere = [u for u in page.urls if urlparse(u).scheme != "data" and urlparse(u).hostname != "127.0.0.1"]
    assert elsewhere == [], f"requests left 127.0.0.1: {elsewhere[:5]}"
