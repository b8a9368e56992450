"""Training through the stages against the unpipelined model, and the study over seeds."""
