"""The workbook's colours in one place: the Okabe-Ito palette, safe for the common kinds of
colour blindness, and the marks that carry every right/wrong verdict besides colour.

Okabe and Ito, "Color Universal Design" (2008); the hex values are theirs."""

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}

RIGHT_COLOUR = OKABE_ITO["bluish green"]
WRONG_COLOUR = OKABE_ITO["vermillion"]
NO_ANSWER_COLOUR = "#999999"  # grey: neither right nor wrong
PAD_SHADE = "#d9d9d9"  # positions the attention mask marks as padding
PAD_ID_REAL = OKABE_ITO["sky blue"]  # a real token that carries the pad id (pad == eos)


def verdict_colour(right: bool | None) -> str:
    """A verdict's colour (it is never told by colour alone: a mark stands beside it)."""
    return NO_ANSWER_COLOUR if right is None else (RIGHT_COLOUR if right else WRONG_COLOUR)


TARGET_LINE = "#555555"  # dark grey: the accuracy a run must reach
CHANCE_LINE = NO_ANSWER_COLOUR  # grey: a uniform guess

SERIES = [OKABE_ITO[name] for name in ("vermillion", "bluish green", "blue", "orange", "reddish purple", "black")]
"""Colours for a sequence of series (rules, runs), in order."""

# For a projector: figures at most this wide (a notebook column at full size), text at least this
# large at that size.
MAX_WIDTH_IN = 10
PROJECTOR_PT = 14
# ... and at most this tall: at the notebook's 100 dpi, with the 0.1 inch margins a stored figure
# gets, 550 px. JupyterLab's notebook area in Chromium on a 1366x768 laptop is 560 px tall (768 px
# less Chromium's tab strip and toolbar, 87 px, and Lab's bars, 121 px: measured in a real window,
# tests/browser/conftest.py), so a figure's legend and last panel show together.
MAX_HEIGHT_IN = 5.3


def text_inches(text: str, size: float = PROJECTOR_PT, weight: str = "normal") -> float:
    """How wide ``text`` is drawn, in inches (its widest line): a figure sizes its margins and
    cells from this, so a label at ``PROJECTOR_PT`` fits without a draw to measure it."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(size=size, weight=weight)
    measure = TextToPath().get_text_width_height_descent
    return max(measure(line, font, ismath=False)[0] for line in text.split("\n")) / 72  # points to inches
