"""What every executor is given and returns, and the pieces of a play-through they share."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from evals.corpus import Conversation, Corpus, Turn
from evals.results import AnswerRun, RunResult
from evals.strategies._faults import StrategyError, kind_of
from evals.strategies.base import lone_surrogate

if TYPE_CHECKING:
    from evals.cache import Cache
    from evals.config import RunConfig
    from evals.llm import AskedPoint, ChatClient
    from evals.strategies import MemoryStrategy, Planned

__all__ = ["Executor", "PlayJob", "Played", "chat_client", "collector", "corpus_texts", "texts_of"]

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class PlayJob:
    """One run's play-through, planned and ready: what an executor needs to play it."""

    config: RunConfig  # the run's settings; a Ray worker plans its own strategy from them
    corpus: Corpus
    planned: Planned  # the strategy's configuration, as the run records it
    strategy: MemoryStrategy  # built in this process (played here by the local executor)
    cache: Cache | None = None  # embeddings and LLM replies across runs
    client: ChatClient | None = None  # answers (None: answers off)
    progress: Progress | None = None
    count_tokens: Callable[[list[str]], list[int]] | None = None  # the run's token counter (footprint, cutoffs)
    backoff: float = 1.0  # first wait before retrying an LLM request ($EVALS_LLM_BACKOFF)


@dataclass(frozen=True)
class Played:
    """What a play-through gives back to be scored and stored."""

    run: RunResult
    answers: AnswerRun | None = None


class Executor(Protocol):
    name: str

    def play(self, job: PlayJob) -> Played: ...


def texts_of(turn: Turn) -> tuple[str, ...]:
    """What a play-through embeds for a turn: its question (if a test point) and its content."""
    return (turn.test_at.question, turn.content) if turn.test_at is not None else (turn.content,)


def corpus_texts(conversations: Iterable[Conversation]) -> Iterator[str]:
    """Every text a play-through of ``conversations`` embeds, in play order (repeats included)."""
    return (text for conversation in conversations for turn in conversation.turns for text in texts_of(turn))


def collector(asked: dict[str, list[AskedPoint]], *, k: int, name: str = "") -> Callable[..., None]:
    """Keeps, at each test point, the messages the strategy would give a model for its question,
    with the run's ``k``, so the model sees as many records as were scored. ``name`` (the registry's
    name for the strategy) is for the error when they are not chat messages."""
    from evals.llm import AskedPoint

    def collect(conversation_id: str, point: Any, strategy: Any) -> None:
        context = strategy.context_for(point.question, k=k)
        if not isinstance(context, list | tuple) or not all(
            isinstance(m, Mapping) and _text(m.get("role")) and _text(m.get("content")) for m in context
        ):
            raise StrategyError(
                f"strategy {name or type(strategy).__name__}: context_for() must return a list of "
                f"{{'role': str, 'content': str}} messages (text without lone surrogates); it returned {kind_of(context)}"
            )
        asked.setdefault(conversation_id, []).append(
            AskedPoint(
                conversation_id=conversation_id,
                turn_index=point.turn_index,
                question=point.question,
                expected_fact=point.expected_fact,
                expected_keywords=list(point.expected_keywords),
                context=[dict(m) for m in context],
                answerable=getattr(point, "answerable", True),
            )
        )

    return collect


def _text(value: Any) -> bool:
    """Whether ``value`` is text a request can carry (a str without lone surrogates)."""
    return isinstance(value, str) and lone_surrogate(value) is None


def chat_client(config: RunConfig, cache: Cache | None, api_key: str | None, backoff: float) -> ChatClient:
    """The chat client a run with answers uses (the key: ``api_key``, else $OPENAI_API_KEY)."""
    from evals.llm import ChatClient, RetryPolicy

    return ChatClient(
        base_url=config.endpoint(),
        api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        cache=cache,
        concurrency=config.concurrency,
        policy=RetryPolicy(timeout=config.request_timeout, retries=config.max_retries, backoff=backoff),
    )
