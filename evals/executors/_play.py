"""What every executor is given and returns, and the pieces of a play-through they share."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from evals.corpus import Conversation, Corpus, Turn
from evals.results import AnswerRun, RunResult

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


def collector(asked: dict[str, list[AskedPoint]], *, k: int) -> Callable[..., None]:
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
