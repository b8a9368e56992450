"""Every picture a notebook makes is stored as a picture, and fits one projector screen.

Read from the stored outputs, as the read-only site and a reader without a kernel see them
(``tests/figures/test_projector.py`` checks the figures as drawn). A figure a cell returns but
never shows is stored as its text, ``<Figure size 937x306 with 1 Axes>``: that output must carry
an ``image/png`` beside the text. Each stored PNG is at most ``SCREEN_PX`` tall, read from its
header at the stored size.
"""

import base64
import json
import pathlib
import re
import struct

import pytest

SCREEN_PX = 550  # Lab's notebook area in Chromium on a 1366x768 laptop is 560 px (tests/browser/conftest.py)
NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9]*.ipynb"))
FIGURE_TEXT = re.compile(r"^<Figure size [\d.]+x[\d.]+ with \d+ Axes>$")


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, which the format puts first."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _outputs(path):
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            yield index, output.get("data", {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_figure_is_stored_as_text_only(path):
    as_text = [
        index
        for index, data in _outputs(path)
        if FIGURE_TEXT.match("".join(data.get("text/plain", "")).strip()) and "image/png" not in data
    ]
    assert as_text == [], f"{path.name}: cells {as_text} store a figure as text; show it (plt.show())"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_stored_picture_fits_one_screen(path):
    tall = []
    for index, data in _outputs(path):
        if "image/png" in data:
            height = png_size(base64.b64decode("".join(data["image/png"])))[1]
            if height > SCREEN_PX:
                tall.append((index, height))
    assert tall == [], f"{path.name}: (cell, height px) over {SCREEN_PX}: {tall}"


def test_the_checks_can_fail():
    assert FIGURE_TEXT.match("<Figure size 937.172x306 with 1 Axes>")
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + struct.pack(">II", 800, 1519)
    assert png_size(header) == (800, 1519)
