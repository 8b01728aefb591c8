"""Every decision about a run's figures, each taken once.

The hit rule and evidence matching (:mod:`~evals.judge.scoring`, :mod:`~evals.judge.retrieval`),
every metric declared once (:mod:`~evals.judge.metrics`), answers' lexical scores and QA figures,
the headline rule and its verdicts (:mod:`~evals.judge.headline`), and the statistics. Every
surface (CLI, JSON, site, compare, gate) asks here rather than deciding again.
Importing the package imports nothing.
"""
