"""``recency``: the last k turns, oldest first. What a plain sliding window gives."""

from __future__ import annotations


from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec


class Recency:
    name = "recency"

    def __init__(self) -> None:
        self._turns: list[Message] = []

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._turns.append({"role": role, "content": content})

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return self._turns[-k:]

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return [t["content"] for t in self._turns[-k:]]

    def reset(self) -> None:
        self._turns.clear()


SPEC = StrategySpec(name="recency", build=lambda options, context: Recency(), summary="The last k turns: a plain sliding window.")
