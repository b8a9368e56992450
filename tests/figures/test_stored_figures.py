"""Every figure a notebook cell makes is stored as a picture that fits one projector screen.

``tests/figures/test_projector.py`` checks each figure as drawn; this checks what the notebooks
store, which is what the site and a reader who does not run the cells see: a figure left as the
text ``<Figure size ... with N Axes>`` shows no picture anywhere, and a stored PNG taller than
``SCREEN_PX`` does not fit a 1080-line projector at the size it is stored (it scrolls).
"""

import base64
import json
import struct
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SCREEN_PX = 1080

# Notebooks whose figures are being reworked elsewhere (01's stage split is stored as text, its
# review figure is 1519 px tall). Each listed case is a strict xfail: empty the list once fixed.
KNOWN = {("01", "stored as text"), ("01", "too tall")}


def _figures(notebook: Path) -> list[tuple[int, dict]]:
    """``(cell index, output data)`` for every output that is or was meant to be a figure."""
    found = []
    for index, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "<Figure size" in "".join(data.get("text/plain", "")):
                found.append((index, data))
    return found


def _png_height(encoded: str) -> int:
    png = base64.b64decode(encoded)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int(struct.unpack(">I", png[20:24])[0])  # the IHDR chunk: width, then height


def _cases(what: str) -> list:
    params = []
    for notebook in NOTEBOOKS:
        marks = ()
        if (notebook.name[:2], what) in KNOWN:
            marks = (pytest.mark.xfail(strict=True, reason="notebook 01's figures are reworked elsewhere"),)
        params.append(pytest.param(notebook, id=notebook.name[:2], marks=marks))
    return params


@pytest.mark.parametrize("notebook", _cases("stored as text"))
def test_every_figure_is_stored_as_a_picture(notebook):
    as_text = [index for index, data in _figures(notebook) if "image/png" not in data]
    assert as_text == [], f"{notebook.name}: cells {as_text} store a figure as text only"


@pytest.mark.parametrize("notebook", _cases("too tall"))
def test_every_stored_figure_fits_one_screen(notebook):
    heights = {index: _png_height(data["image/png"]) for index, data in _figures(notebook) if "image/png" in data}
    assert {i: h for i, h in heights.items() if h > SCREEN_PX} == {}, notebook.name


def test_the_png_reader_reads_the_height():
    # a 1 x 2 PNG header, written by hand: width 1, height 2
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 1, 2) + b"\x08\x02\x00\x00\x00"
    assert _png_height(base64.b64encode(header).decode()) == 2
