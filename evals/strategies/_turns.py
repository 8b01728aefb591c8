"""The turns the simple baselines hold (full_history, recency, bm25, random_k): every turn added, in order."""

from __future__ import annotations

from collections.abc import Iterable

from evals.strategies.base import Message

__all__ = ["HeldTurns"]


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
