"""Making a run: its settings, the play-through, where it runs, the LLM calls, the store round trip.

:mod:`~evals.run.config` (``RunConfig``), :mod:`~evals.run.playthrough` (reset, retrieve
before add), :mod:`~evals.run.executors` (this process or Ray), :mod:`~evals.run.llm`
(answers and the judge), :mod:`~evals.run.evaluate` (one run end to end),
:mod:`~evals.run.workflow` (reuse a stored run or compute and append) and
:mod:`~evals.run.suite` (a suite file's runs). Importing the package imports nothing.
"""
