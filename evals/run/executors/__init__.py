"""Where a run's conversations are played: in this process, or as tasks on a Ray cluster.

:func:`evals.run.evaluate.evaluate` plans and builds the strategy, then hands the
play-through to an executor and scores what comes back, the same way for both:

* :class:`LocalExecutor` (``--executor local``, the default): embeds every text
  up front through the cache, plays the corpus through the one strategy, and
  answers the test points. It never imports ray. With ``jobs`` above one
  (``python -m evals`` uses every core), the conversations are played by forked
  copies of this process, one share each (:mod:`evals.run.executors._fork`).
* :class:`RayExecutor` (``--executor ray``, the optional ``ray`` extra): the
  missing embeddings are computed by tasks on the cluster, then each
  conversation is a task that builds a fresh strategy from the run's
  configuration, plays that conversation and answers its test points. The
  driver gathers the results in corpus order and writes to the cache what the
  workers computed; the run it returns is the local run's, test point by test
  point, apart from timings (:mod:`evals.run.executors._ray`).
"""

from __future__ import annotations

from evals.run.executors._local import LocalExecutor
from evals.run.executors._play import Executor, NotPlayed, Played, PlayJob, chat_client, corpus_texts

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "NotPlayed",
    "PlayJob",
    "Played",
    "RayExecutor",
    "chat_client",
    "corpus_texts",
    "make_executor",
]

EXECUTORS = ("local", "ray")


def __getattr__(name: str):
    # RayExecutor's module is light, but keep `import evals.run.executors` free of it anyway.
    if name == "RayExecutor":
        from evals.run.executors._ray import RayExecutor

        return RayExecutor
    raise AttributeError(name)


def make_executor(name: str = "local", *, address: str | None = None, gpus: float = 0.0, jobs: int | None = 1) -> Executor:
    """The executor ``--executor name`` means (``address`` and ``gpus`` are Ray's, ``jobs`` the local one's)."""
    if name == "local":
        return LocalExecutor(jobs)
    if name == "ray":
        from evals.run.executors._ray import RayExecutor

        return RayExecutor(address=address, gpus=gpus)
    raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
