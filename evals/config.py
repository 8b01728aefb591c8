"""A run's settings: everything that decides its numbers, in one place (:class:`RunConfig`).

It sits below the executors, which carry it to where the conversations play
(a Ray worker plans its own strategy from it), and below :mod:`evals.evaluate`,
which runs it end to end.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals.corpus import MAX_CUTOFF  # one bound for --cutoffs and a references.json k
from evals.results import DEFAULT_CUTOFFS, MAX_K, MAX_SEED, MIN_SEED
from evals.strategies import BuildContext, Planned, Registry

if TYPE_CHECKING:
    from evals.cache import Cache

__all__ = ["MAX_CONCURRENCY", "MAX_CUTOFF", "MAX_REQUEST_TIMEOUT", "MAX_RETRIES", "RunConfig"]

# Bounds of the LLM settings: generous, but finite, so a typo is refused before a run starts.
MAX_CONCURRENCY = 256
MAX_REQUEST_TIMEOUT = 3600
MAX_RETRIES = 100


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
    # The corpus folder as the user gave it, recorded with the run (``corpus_dir``) when ``corpus`` is
    # that path made absolute (the CLI does, before any plug-in code could change the working directory).
    corpus_as_given: str | None = None
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
    def corpus_dir(self) -> str:
        """The corpus folder as recorded with the run: as the user gave it."""
        return self.corpus_as_given if self.corpus_as_given is not None else str(self.corpus)

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
