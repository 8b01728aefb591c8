"""One run, end to end: load the corpus, build the strategy, play it, score it.

This is the function the CLI calls and the tests call. Its settings,
:class:`~evals.config.RunConfig`, live in :mod:`evals.config` (below the
executors, which carry them); they are importable from here too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from evals.cache import Cache
from evals.config import (
    MAX_CONCURRENCY,
    MAX_CUTOFF,
    MAX_REQUEST_TIMEOUT,
    MAX_RETRIES,
    RunConfig,
)
from evals.corpus import load_corpus
from evals.errors import EvalsError
from evals.executors import Executor, LocalExecutor, PlayJob, chat_client
from evals.playthrough import likely_records
from evals.scoring import Evaluation, score_run
from evals.strategies import Registry
from evals.tokens import TokenCounter

__all__ = ["MAX_CONCURRENCY", "MAX_CUTOFF", "MAX_REQUEST_TIMEOUT", "MAX_RETRIES", "RunConfig", "evaluate", "llm_backoff"]

# The longest first wait between LLM retries $EVALS_LLM_BACKOFF may ask for.
MAX_BACKOFF = 60.0


def evaluate(
    config: RunConfig,
    *,
    counter: TokenCounter | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: Cache | None = None,
    api_key: str | None = None,
    registry: Registry | None = None,
    executor: Executor | None = None,
) -> Evaluation:
    """Play ``config`` and score it. ``cache`` holds slow or paid work (embeddings,
    LLM requests) across runs; None computes everything afresh and keeps nothing.
    ``api_key`` (default: $OPENAI_API_KEY) is for the chat endpoint when answers are on.
    ``registry`` finds the strategy (default: the installed ones). ``executor`` plays
    the conversations (default: :class:`~evals.executors.LocalExecutor`, in this process)."""
    backoff = llm_backoff() if config.answers_on else None  # a bad setting is refused before any work
    # The corpus is checked before the strategy is built, so a bad corpus is
    # reported even when, say, an OpenAI key is missing too.
    corpus = load_corpus(config.corpus)
    executor = executor or LocalExecutor()
    client = chat_client(config, cache, api_key, backoff) if backoff is not None else None
    try:
        planned = config.plan(registry, cache=cache, client=client)
        strategy = planned.build()
        counter = counter or TokenCounter()
        counter.count_ahead(likely_records(corpus, strategy, planned.spec.name))  # on the second core, while the turns play
        job = PlayJob(
            config,
            corpus,
            planned,
            strategy,
            cache=cache,
            client=client,
            progress=progress,
            count_tokens=counter.counts,
            backoff=backoff or 1.0,
        )
        played = executor.play(job)
        scores = score_run(played.run, counter)
    finally:
        if client is not None:
            client.close()
    return Evaluation(corpus=corpus, run=played.run, scores=scores, answers=played.answers)


def llm_backoff() -> float:
    """$EVALS_LLM_BACKOFF, the first retry's wait in seconds (default 1; tests make it short)."""
    text = os.environ.get("EVALS_LLM_BACKOFF", "1.0")
    try:
        backoff = float(text)
    except ValueError:
        backoff = math.nan
    if not 0 <= backoff <= MAX_BACKOFF:  # false for nan too
        raise EvalsError(f"EVALS_LLM_BACKOFF must be a number of seconds from 0 to {MAX_BACKOFF:g}, not {text!r}")
    return backoff
