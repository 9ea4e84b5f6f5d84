"""Developer tools that run from a checkout (not part of the installed ``nspca_core`` package).

``python -m tools.reproduce`` regenerates the seed papers' figures and tables
(``make reproduce``).
"""
