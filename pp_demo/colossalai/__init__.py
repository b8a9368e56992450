"""ColossalAI 0.5.0's own code beside the workbook: its pipeline forwards run in one process,
its sdists patched, and the pull request's claims judged on them.

Nothing here imports ColossalAI at module level: it is imported quietly, when called.
"""
