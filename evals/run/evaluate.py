"""One run, end to end: load the corpus, build the strategy, play it, score it.

This is the function the CLI calls and the tests call. Its settings,
:class:`~evals.run.config.RunConfig`, live in :mod:`evals.run.config` (below the
executors, which carry them); they are importable from here too.
"""

from __future__ import annotations

import functools
import gc
import math
import os
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evals.errors import EvalsError
from evals.io.cache import Cache, user_cache_path
from evals.judge.scoring import Evaluation, Scores, score_run
from evals.model.corpus import Corpus, load_corpus
from evals.model.costs import PriceTable, shipped_prices
from evals.model.results import RunResult
from evals.model.tokens import TokenCounter
from evals.run.config import (
    MAX_CONCURRENCY,
    MAX_CUTOFF,
    MAX_REQUEST_TIMEOUT,
    MAX_RETRIES,
    RunConfig,
)
from evals.run.executors import Executor, LocalExecutor, NotPlayed, PlayJob, chat_client
from evals.run.playthrough import likely_records
from evals.strategies import CountsAhead, MemoryStrategy, Registry

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_CUTOFF",
    "MAX_REQUEST_TIMEOUT",
    "MAX_RETRIES",
    "PlayFailure",
    "RunConfig",
    "evaluate",
    "llm_backoff",
    "play_failure",
]


@dataclass(frozen=True)
class PlayFailure:
    """What a run whose play-through failed is stored with (:class:`evals.store.FailedRun`): the strategy raised, a
    call ran past --call-timeout, a process playing it died, a memory wrote nothing. :func:`evaluate` attaches it to
    the error it raises as ``play_failure`` (:func:`play_failure` reads it), the error's type and words unchanged.
    Bad input (a corpus, an option, a strategy that cannot be built) is refused before the play and has none."""

    configuration: dict[str, Any]
    model: str
    source: str | None
    corpus: Corpus
    started_at: datetime
    duration_s: float


def play_failure(exc: BaseException) -> PlayFailure | None:
    """The play failure ``exc`` was raised with, or None: an error before or after the play."""
    found = getattr(exc, "play_failure", None)
    return found if isinstance(found, PlayFailure) else None


# The longest first wait between LLM retries $EVALS_LLM_BACKOFF may ask for.
MAX_BACKOFF = 60.0


def evaluate(
    config: RunConfig,
    *,
    counter: TokenCounter | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: Cache | None | Literal["user"] = "user",
    api_key: str | None = None,
    registry: Registry | None = None,
    executor: Executor | None = None,
    held_tokens: bool = True,
    prices: PriceTable | None = None,
) -> Evaluation:
    """Play ``config`` and score it. ``cache`` holds slow or paid work (embeddings,
    LLM requests) across runs: by default ``"user"``, the user's cache (:func:`evals.io.cache.user_cache_path`,
    opened only if the run embeds with a slow model); None computes everything afresh and keeps nothing.
    ``api_key`` (default: $OPENAI_API_KEY) is for the chat endpoint when answers are on.
    ``registry`` finds the strategy (default: the installed ones). ``executor`` plays
    the conversations (default: :class:`~evals.run.executors.LocalExecutor`, in this process).
    ``held_tokens=False`` leaves the tokens a memory holds uncounted (``held_tokens`` None): the
    original CLI's document does not show them, and counting them is most of its token counting.
    ``prices`` (default: the shipped table, :func:`evals.model.costs.shipped_prices`) costs the LLM requests:
    each kind's price is recorded with the run, so its dollars stay what they were when it ran."""
    if cache == "user":
        path = user_cache_path()
        with Cache.open(path) if path is not None else nullcontext() as opened:
            return evaluate(
                config,
                counter=counter,
                progress=progress,
                cache=opened,
                api_key=api_key,
                registry=registry,
                executor=executor,
                held_tokens=held_tokens,
                prices=prices,
            )
    backoff = llm_backoff() if config.answers_on else None  # a bad setting is refused before any work
    # The corpus is checked before the strategy is built, so a bad corpus is
    # reported even when, say, an OpenAI key is missing too.
    corpus = _load_without_collecting(config.corpus)
    # The protocols' templates, read and checked before any work (the harness's own: nothing to read).
    protocols = config.load_protocols() if config.answers_on and (config.published or config.grader != "harness") else None
    executor = executor or LocalExecutor()
    client = chat_client(config, cache, api_key, backoff) if backoff is not None else None
    try:
        planned = config.plan(registry, cache=cache, client=client)
        strategy = planned.build()
        counter = counter or TokenCounter()
        # Counts during the play are for the footprint and for the cutoffs beside k; without either, none.
        counts_in_play = held_tokens or bool(set(config.cutoffs) - {config.k})
        many = counter.ahead_pays(_records_needed(config, corpus, strategy, planned.spec.ignores_k, held_tokens))
        job = PlayJob(
            config,
            corpus,
            planned,
            strategy,
            cache=cache,
            client=client,
            progress=progress,
            count_tokens=counter.counts if counts_in_play else None,
            backoff=backoff or 1.0,
            protocols=protocols,
            # Many records to count after the play: each process that plays a share counts and scores it there.
            score=functools.partial(_score_share, counter) if many and not counts_in_play else None,
        )
        scores_where_played = getattr(executor, "scores_where_played", None)  # an executor that can says so
        if job.score is not None and (scores_where_played is None or not scores_where_played(job)):
            job = replace(job, score=None)
        if many:
            # What an earlier run counted comes from the cache (read by each player, where the players score).
            counter.remember_in(cache)
            if job.score is None:  # counted on the second core, while the turns play
                counter.count_ahead(likely_records(corpus, strategy, planned.spec.name, held=held_tokens))
        else:  # few to count, once played: the tokenizer loads on the second core meanwhile
            counter.load_beside()
        started_at, clock = datetime.now(UTC), time.perf_counter()
        try:
            played = executor.play(job)
        except NotPlayed:
            raise
        except EvalsError as exc:
            exc.play_failure = PlayFailure(  # type: ignore[attr-defined]
                planned.configuration, planned.model, planned.spec.source, corpus, started_at, time.perf_counter() - clock
            )
            raise
        if played.scored is not None:
            scores = Scores.joined([share for share, _ in played.scored])
            counter.keep_counts(fresh for _, fresh in played.scored)
        else:
            scores = score_run(played.run, counter)
    finally:
        if client is not None:
            client.close()
    if played.answers is not None:
        table = prices or shipped_prices()
        for tally in played.answers.usage.values():
            price = table.lookup(tally.model)
            tally.price = price.as_json() if price is not None else None
    return Evaluation(corpus=corpus, run=played.run, scores=scores, answers=played.answers)


def _score_share(counter: TokenCounter, run: RunResult) -> tuple[Scores, dict[str, bytes]]:
    """A share of a run scored in the process that played it, beside the others: its tokens counted there, by a
    counter that forks no helper (every core is playing) and only reads the cache; with the counts it made anew,
    for this process to keep (:meth:`TokenCounter.keep_counts`)."""
    scores = score_run(run, counter.alone())
    return scores, counter.fresh_counts()


def _load_without_collecting(directory: Path) -> Corpus:
    """:func:`load_corpus` with Python's cycle collector paused: loading makes an object or three per
    turn and keeps them all (no cycles among them), and each collection meanwhile walks every one made
    so far, a quarter of the loading time on a corpus of 100,000 turns."""
    if not gc.isenabled():
        return load_corpus(directory)
    gc.disable()
    try:
        return load_corpus(directory)
    finally:
        gc.enable()


def _records_needed(
    config: RunConfig, corpus: Corpus, strategy: MemoryStrategy, ignores_k: bool, held_tokens: bool
) -> int | None:
    """At most how many texts the run will count, when that is known: a strategy that retrieves up to
    k whole texts per cutoff and test point, with nothing held counted; else None (most of them)."""
    if held_tokens or ignores_k or isinstance(strategy, CountsAhead):
        return None
    points = sum(1 for c in corpus.conversations for t in c.turns if t.test_at is not None)
    return points * sum({config.k, *config.cutoffs})


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
