"""The default executor: every conversation played on this machine, through the strategy built here;
with ``jobs`` above one, by that many forked processes (:mod:`evals.run.executors._fork`)."""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING

from evals.run.executors._play import (
    Played,
    PlayJob,
    count_memory_writes,
    play_planned,
    prefetch_corpus,
    prefetches,
    protocol_arguments,
)

if TYPE_CHECKING:
    from evals.model.corpus import Corpus
    from evals.model.results import RunResult
    from evals.run.llm import AskedPoint

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Embed up front (through the cache), play every conversation, answer the test points.

    ``jobs`` (default 1: in this process) caps the processes that play the conversations; None means
    one per usable core. More than one is used only where forking is safe and the play needs nothing
    but this process's memory, on a corpus of at least ``fork_above`` turns (:meth:`forks`); elsewhere
    the run is played here, as with 1."""

    name = "local"

    def __init__(self, jobs: int | None = 1, *, fork_above: int | None = None) -> None:
        from evals.run.executors._fork import FORK_ABOVE, usable_cores

        self.jobs = usable_cores() if jobs is None else jobs
        self.fork_above = FORK_ABOVE if fork_above is None else fork_above  # turns a corpus needs to be forked for

    def forks(self, job: PlayJob, prefetched: bool) -> bool:
        """Whether ``job`` is played by forked processes: more than one job and one conversation, no
        answers (their requests go through this process's client), enough turns to pay for the forks,
        nothing embedded through the cache or a model (a child would share the parent's handles), no token
        counts asked during the play (the counter's child answers this process), and a process that may fork."""
        conversations = job.corpus.conversations
        if self.jobs < 2 or len(conversations) < 2:
            return False
        from evals.run.executors._fork import can_fork

        if getattr(conversations, "held", True) and sum(len(c.turns) for c in conversations) < self.fork_above:
            return False
        if job.client is not None or prefetched or job.count_tokens is not None:
            return False
        return can_fork()

    def scores_where_played(self, job: PlayJob) -> bool:
        """Whether :meth:`play` scores ``job``'s shares in the processes that play them (``job.score``, on every
        core), rather than leaving the whole run to be scored in this process after the play."""
        return job.score is not None and self.forks(job, prefetches(job))

    def play(self, job: PlayJob) -> Played:
        config, corpus, strategy = job.config, job.corpus, job.strategy
        clock = time.perf_counter()
        prefetch = prefetch_corpus(job, corpus.conversations, job.progress)
        prefetched = time.perf_counter() - clock
        asked: dict[str, list[AskedPoint]] = {}

        def play(part: Corpus, progress=job.progress) -> RunResult:
            return play_planned(
                part,
                strategy,
                config,
                job.planned,
                asked if job.client is not None else None,
                count_tokens=job.count_tokens,
                corpus_dir=config.corpus_dir,
                progress=progress,
            )

        # What exists before the play (the corpus: an object or three per turn, and every module) lives
        # through it: the cycle collector leaves it alone meanwhile instead of walking it on each pass.
        # (Not when something else has frozen objects: unfreezing would release those too.)
        frozen = gc.isenabled() and gc.get_freeze_count() == 0
        if frozen:
            gc.freeze()
        scored = None
        try:
            if self.forks(job, prefetch):
                from evals.run.executors._fork import play_forked

                run, shares = play_forked(corpus, self.jobs, lambda part: play(part, None), job.progress, after=job.score)
                scored = shares if job.score is not None else None
            else:
                run = play(corpus)
        finally:
            if frozen:
                gc.unfreeze()
        if prefetch:  # the embedding up front is part of the run's time, and reported apart from the calls
            timings = run.timings.model_copy(update={"prefetch_ns": round(prefetched * 1e9)})
            run = run.model_copy(update={"duration_s": run.duration_s + prefetched, "timings": timings})
        answers = None
        if job.client is not None:
            from evals.run.llm import answer_run

            answers = answer_run(
                job.client,
                [asked.get(c.conversation_id, []) for c in run.conversations],
                answer_model=config.answer_model,
                judge_model=config.judge_model if config.judge else None,
                progress=job.progress,
                judge_repeats=config.judge_repeats if config.judge else 1,
                call_timeout=config.call_timeout,
                **protocol_arguments(job.protocols),
            )
            count_memory_writes(answers, strategy)  # a memory's own LLM requests (graphiti's)
        return Played(run, answers, scored)
