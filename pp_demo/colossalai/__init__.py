"""ColossalAI 0.5.0's own code beside the workbook: its pipeline forwards run in one process,
its sdists patched, and the pull request's claims judged on them.

Nothing here imports ColossalAI at module level: it is imported quietly, when called.
"""


class MissingPackage(ImportError):
    """An optional package that one part of the workbook needs (ColossalAI, for notebook 06) is
    not installed. The message is one line that says how to install it; a notebook shows that
    line alone, and later cells that needed what it would have defined say it again
    (``pp_demo.workshop.cell_errors``)."""
