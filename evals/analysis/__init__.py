"""Questions asked of stored runs: is A better than B, did a change regress, what would errata change.

:mod:`~evals.analysis.compare` (paired tests over the headline's verdicts),
:mod:`~evals.analysis.gate` and its report, :mod:`~evals.analysis.errata` (the
headline recomputed with corrections) and :mod:`~evals.analysis.probe` (what a
protocol's judge accepts). They read the store and the judge; they never run
a strategy. Importing the package imports nothing.
"""
