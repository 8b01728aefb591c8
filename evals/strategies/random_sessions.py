"""``random_sessions``: k earlier sessions drawn uniformly at random, each one record. The chance floor of session documents.

A memory whose records are whole sessions (``chroma_mempalace_text
granularity=session``) holds a large share of a conversation in ten records:
on LoCoMo ten sessions are 31-53% of it. Its recall is to be read against this
row, which draws the sessions blind, as ``random_k`` is the floor of the turn
memories. Each record is a session's turns as the corpus writes them, one a
line, naming every turn it holds (``Record.turns``); a turn without a session
is a session of its own. The draw is random_k's (:func:`evals.strategies.random_k.drawn`):
seeded by the run's seed, the conversation so far and the question, so it is
reproducible, and its first k are the draw at k (``prefix_stable``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from evals.strategies.base import Message, Record, memories_context
from evals.strategies.random_k import RandomKOptions, drawn, seed_of
from evals.strategies.registry import StrategySpec


class RandomSessions:
    name = "random_sessions"

    def __init__(self, *, seed: int = 42) -> None:
        self._seed = seed
        self.reset()

    def add(self, role: str, content: str, *, turn: int | None = None, session: str | None = None, **_: Any) -> None:
        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        key = session if session is not None else f"turn-{index}"
        texts, turns = self._sessions.setdefault(key, ([], []))
        texts.append(content)
        turns.append(index)
        self._history.update(f"{role}\x00{len(content)}\x00{content}".encode("utf-8", "surrogatepass"))

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        sessions = list(self._sessions.values())
        order = drawn(len(sessions), self._seed, self._history.hexdigest(), query)
        return [Record("\n".join(sessions[i][0]), None, None, tuple(sessions[i][1])) for i in order[:k]]

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return memories_context(self.retrieve(query, k), self.name)

    def reset(self) -> None:
        self._sessions: dict[str, tuple[list[str], list[int]]] = {}  # session -> its turns' texts and numbers
        self._history = hashlib.blake2b(digest_size=16)
        self._next_turn = 0

    def held_count(self) -> int:
        return len(self._sessions)

    def held_texts(self) -> Iterable[str]:
        return ["\n".join(texts) for texts, _ in self._sessions.values()]


SPEC = StrategySpec(
    name="random_sessions",
    build=lambda options, context: RandomSessions(seed=seed_of(options, context)),
    options=RandomKOptions,
    describe=lambda options, context: {"name": "random_sessions", "seed": seed_of(options, context),
                                       "draw": "shuffle_by_history", "document": "session, its turns one a line"},
    summary="k earlier sessions drawn uniformly at random, one record each: the chance floor of session documents.",
)
