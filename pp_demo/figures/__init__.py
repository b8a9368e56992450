"""Every matplotlib figure of the notebooks, in one colour-blind-safe palette."""
