"""The default executor: every conversation played in this process, through one strategy."""

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
    protocol_arguments,
)

if TYPE_CHECKING:
    from evals.run.llm import AskedPoint

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Embed up front (through the cache), play every conversation in order, answer the test points."""

    name = "local"

    def play(self, job: PlayJob) -> Played:
        config, corpus, strategy = job.config, job.corpus, job.strategy
        clock = time.perf_counter()
        prefetch = prefetch_corpus(job, corpus.conversations, job.progress)
        prefetched = time.perf_counter() - clock
        asked: dict[str, list[AskedPoint]] = {}
        # What exists before the play (the corpus: an object or three per turn, and every module) lives
        # through it: the cycle collector leaves it alone meanwhile instead of walking it on each pass.
        # (Not when something else has frozen objects: unfreezing would release those too.)
        frozen = gc.isenabled() and gc.get_freeze_count() == 0
        if frozen:
            gc.freeze()
        try:
            run = play_planned(
                corpus,
                strategy,
                config,
                job.planned,
                asked if job.client is not None else None,
                count_tokens=job.count_tokens,
                corpus_dir=config.corpus_dir,
                progress=job.progress,
            )
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
        return Played(run, answers)
