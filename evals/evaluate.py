"""One run, end to end: load the corpus, build the strategy, play it, score it.

This is the function the CLI calls and the tests call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from evals.cache import Cache
from evals.corpus import load_corpus
from evals.errors import EvalsError
from evals.playthrough import likely_records, play_corpus
from evals.results import Evaluation
from evals.scoring import score_run
from evals.strategies import build_strategy
from evals.tokens import TokenCounter

if TYPE_CHECKING:
    from evals.llm import AskedPoint

__all__ = ["RunConfig", "evaluate"]


class RunConfig(BaseModel):
    """Everything that decides a run's numbers, in one place."""

    model_config = ConfigDict(frozen=True)

    strategy: str = "mneme"  # the CLI's --runner
    backend: str = "memory"
    embedder: str = "hash"
    corpus: Path = Path("corpus")
    k: int = Field(default=5, ge=1)
    seed: int = 42
    # End-to-end answers (--with-answers) and their judge (--judge, which implies answers).
    # The API key is deliberately not a setting: it never travels with the run.
    with_answers: bool = False
    judge: bool = False
    answer_model: str = "gpt-4o-mini"
    judge_model: str = "gpt-4o-mini"
    base_url: str | None = None  # None: $OPENAI_BASE_URL, else OpenAI's
    concurrency: int = Field(default=4, ge=1)
    request_timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0)

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

    def summarize_fn(self, client: Any = None) -> Any:
        """summary_buffer's summariser: the answer model when answers are on, else the default."""
        if not (self.answers_on and self.strategy == "summary_buffer"):
            return None
        from evals.llm import ChatSummarizer

        return ChatSummarizer(client, self.answer_model)


def evaluate(
    config: RunConfig,
    *,
    counter: TokenCounter | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: Cache | None = None,
    api_key: str | None = None,
) -> Evaluation:
    """Play ``config`` and score it. ``cache`` holds slow or paid work (embeddings,
    LLM requests) across runs; None computes everything afresh and keeps nothing.
    ``api_key`` (default: $OPENAI_API_KEY) is for the chat endpoint when answers are on."""
    # The corpus is checked before the strategy is built, so a bad corpus is
    # reported even when, say, an OpenAI key is missing too.
    corpus = load_corpus(config.corpus)
    client = _chat_client(config, cache, api_key) if config.answers_on else None
    try:
        strategy = build_strategy(
            config.strategy,
            backend=config.backend,
            embedder=config.embedder,
            seed=config.seed,
            cache=cache,
            summarize_fn=config.summarize_fn(client),
        )
        counter = counter or TokenCounter()
        counter.count_ahead(likely_records(corpus, strategy))  # on the second core, while the turns play
        prefetch = getattr(strategy, "prefetch", None)
        clock = time.perf_counter()
        if prefetch is not None:  # batch the slow embeddings up front, through the cache
            prefetch((t for c in corpus.conversations for turn in c.turns for t in _texts_of(turn)), progress)
        prefetched = time.perf_counter() - clock
        asked: dict[str, list[AskedPoint]] = {}
        run = play_corpus(
            corpus,
            strategy,
            k=config.k,
            seed=config.seed,
            corpus_dir=str(config.corpus),
            progress=progress,
            on_test_point=_collector(asked, k=config.k) if client is not None else None,
        )
        if prefetch is not None:  # the embedding up front is part of the run's time
            run = run.model_copy(update={"duration_s": run.duration_s + prefetched})
        scores = score_run(run, counter)
        answers = None
        if client is not None:
            from evals.llm import answer_run

            answers = answer_run(
                client,
                [asked.get(c.conversation_id, []) for c in run.conversations],
                answer_model=config.answer_model,
                judge_model=config.judge_model if config.judge else None,
                progress=progress,
            )
    finally:
        if client is not None:
            client.close()
    return Evaluation(corpus=corpus, run=run, scores=scores, answers=answers)


def _chat_client(config: RunConfig, cache: Cache | None, api_key: str | None) -> Any:
    from evals.llm import ChatClient, RetryPolicy

    # $EVALS_LLM_BACKOFF: the first retry's wait in seconds (tests make it short).
    try:
        backoff = float(os.environ.get("EVALS_LLM_BACKOFF", "1.0"))
    except ValueError:
        raise EvalsError(f"EVALS_LLM_BACKOFF must be a number of seconds, not {os.environ['EVALS_LLM_BACKOFF']!r}") from None
    return ChatClient(
        base_url=config.endpoint(),
        api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        cache=cache,
        concurrency=config.concurrency,
        policy=RetryPolicy(timeout=config.request_timeout, retries=config.max_retries, backoff=backoff),
    )


def _collector(asked: dict[str, list[AskedPoint]], *, k: int) -> Callable[..., None]:
    """Keeps, at each test point, the messages the strategy would give a model for its question,
    with the run's ``k``, so the model sees as many records as were scored."""
    from evals.llm import AskedPoint

    def collect(conversation_id: str, point: Any, strategy: Any) -> None:
        asked.setdefault(conversation_id, []).append(
            AskedPoint(
                conversation_id=conversation_id,
                turn_index=point.turn_index,
                question=point.question,
                expected_fact=point.expected_fact,
                expected_keywords=list(point.expected_keywords),
                context=[dict(m) for m in strategy.context_for(point.question, k=k)],
                answerable=getattr(point, "answerable", True),
            )
        )

    return collect


def _texts_of(turn) -> tuple[str, ...]:
    """What a play-through embeds for a turn: its question (if a test point) and its content."""
    return (turn.test_at.question, turn.content) if turn.test_at is not None else (turn.content,)
