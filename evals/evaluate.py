"""One run, end to end: load the corpus, build the strategy, play it, score it.

This is the function the CLI calls and the tests call.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals.cache import Cache
from evals.corpus import MAX_CUTOFF, load_corpus
from evals.errors import EvalsError
from evals.executors import Executor, LocalExecutor, PlayJob, chat_client
from evals.playthrough import likely_records
from evals.results import DEFAULT_CUTOFFS, MAX_K, MAX_SEED, MIN_SEED, Evaluation
from evals.scoring import score_run
from evals.strategies import BuildContext, Planned, Registry
from evals.tokens import TokenCounter

__all__ = ["MAX_CONCURRENCY", "MAX_CUTOFF", "MAX_REQUEST_TIMEOUT", "MAX_RETRIES", "RunConfig", "evaluate", "llm_backoff"]

# Bounds of the LLM settings: generous, but finite, so a typo is refused before a run starts.
MAX_CONCURRENCY = 256
MAX_REQUEST_TIMEOUT = 3600
MAX_RETRIES = 100
MAX_BACKOFF = 60.0


class RunConfig(BaseModel):
    """Everything that decides a run's numbers, in one place."""

    model_config = ConfigDict(frozen=True)

    strategy: str = "mneme"  # the CLI's --runner: a registered name or package.module:factory
    # The strategy's options (--option key=value), validated by its own options model.
    options: dict[str, Any] = Field(default_factory=dict)
    # Mneme's --backend/--embedder: they fill the options of those names, for any strategy that has them.
    backend: str = "memory"
    embedder: str = "hash"
    corpus: Path = Path("corpus")
    k: int = Field(default=5, ge=1, le=MAX_K)
    # Depths the retrieval metrics are measured at, beside k (--cutoffs); () measures at k only, as the
    # original harness did (python -m evals).
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    seed: int = Field(default=42, ge=MIN_SEED, le=MAX_SEED)
    # End-to-end answers (--with-answers) and their judge (--judge, which implies answers).
    # The API key is deliberately not a setting: it never travels with the run.
    with_answers: bool = False
    judge: bool = False
    answer_model: str = "gpt-4o-mini"
    judge_model: str = "gpt-4o-mini"
    base_url: str | None = None  # None: $OPENAI_BASE_URL, else OpenAI's
    concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    request_timeout: float = Field(default=60.0, gt=0, le=MAX_REQUEST_TIMEOUT, allow_inf_nan=False)
    max_retries: int = Field(default=5, ge=0, le=MAX_RETRIES)

    @field_validator("cutoffs")
    @classmethod
    def _cutoffs_in_range(cls, cutoffs: tuple[int, ...]) -> tuple[int, ...]:
        for cutoff in cutoffs:
            if not 1 <= cutoff <= MAX_CUTOFF:
                raise ValueError(f"a cutoff must be from 1 to {MAX_CUTOFF}, not {cutoff}")
        return tuple(sorted(set(cutoffs)))

    @property
    def answers_on(self) -> bool:
        return self.with_answers or self.judge

    def endpoint(self) -> str:
        """The chat endpoint's base URL, without a trailing slash."""
        from evals.llm import DEFAULT_BASE_URL

        return (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")

    def answer_identity(self) -> dict[str, Any] | None:
        """What sets a run with answers apart from one without (None: no answers)."""
        if not self.answers_on:
            return None
        from evals.llm import answer_identity

        return answer_identity(self.answer_model, self.judge_model if self.judge else None, self.endpoint())

    def plan(self, registry: Registry | None = None, *, cache: Cache | None = None, client: Any = None) -> Planned:
        """The strategy with its validated options and configuration, nothing built yet.

        With answers on, strategies get the answer model as their summariser
        (summary_buffer uses it); ``client`` None only names it, for working
        out a configuration without making requests."""
        registry = registry or Registry()
        spec = registry.get(self.strategy)
        flags = {"backend": self.backend, "embedder": self.embedder}
        options = {key: value for key, value in flags.items() if key in spec.options.model_fields}
        options.update(self.options)
        summarize_fn = summarizer = None
        if self.answers_on:
            from evals.llm import ChatSummarizer

            summarize_fn = ChatSummarizer(client, self.answer_model)
            summarizer = summarize_fn.__name__
        context = BuildContext(seed=self.seed, cache=cache, summarize_fn=summarize_fn, summarizer=summarizer)
        return registry.plan(self.strategy, options, context)


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
        counter.count_ahead(likely_records(corpus, strategy))  # on the second core, while the turns play
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
