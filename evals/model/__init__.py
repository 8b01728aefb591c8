"""The data: a corpus, a run's results, token counts, costs and provenance. No rules.

What counts as a hit, which test points a figure counts and how a figure is
named live in :mod:`evals.judge`; this layer only holds and loads the data.
Importing the package imports nothing.
"""
