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

TARGET_LINE = "#555555"  # dark grey: the accuracy a run must reach
CHANCE_LINE = NO_ANSWER_COLOUR  # grey: a uniform guess

SERIES = [OKABE_ITO[name] for name in ("vermillion", "bluish green", "blue", "orange", "reddish purple", "black")]
"""Colours for a sequence of series (rules, runs), in order."""

MIN_FONT_PT = 10
"""The smallest text in a stored figure, for a room reading it from a projector."""
