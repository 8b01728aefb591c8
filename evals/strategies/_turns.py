"""The turns the simple baselines hold (full_history, recency, bm25, random_k): every turn added, in order."""

from __future__ import annotations

from collections.abc import Iterable

from evals.strategies.base import Message

__all__ = ["HeldTurns", "RankedTurns"]


class HeldTurns:
    """Every turn added, as a message, in conversation order: ``reset`` forgets them, and
    ``held_count`` and ``held_texts`` (:class:`~evals.strategies.base.Footprint`) report them.
    A strategy built on it says only how it retrieves."""

    def __init__(self) -> None:
        self._turns: list[Message] = []

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._turns.append({"role": role, "content": content})

    def reset(self) -> None:
        self._turns.clear()

    def held_count(self) -> int:
        return len(self._turns)

    def held_texts(self) -> Iterable[str]:
        return (t["content"] for t in self._turns)


class RankedTurns(HeldTurns):
    """Held turns retrieved by a ranking (:meth:`_ranked`, best first, at most k), which ``context_for``
    shows the model in the same order: the model sees exactly the records that were scored."""

    def _ranked(self, query: str, k: int) -> list[Message]:
        raise NotImplementedError

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return self._ranked(query, k)

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return [t["content"] for t in self._ranked(query, k)]
