"""The pull request, judged on ColossalAI's own sdists: the sdists and the patches (package data),
the variants' forwards run in a worker, the claims, and ``verify-pr``."""
