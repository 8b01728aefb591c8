"""``no_memory``: remembers nothing. The floor every memory must beat."""

from __future__ import annotations

from collections.abc import Iterable

from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec


class NoMemory:
    name = "no_memory"

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        pass

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return []

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return []

    def record_candidates(self, role: str, content: str) -> tuple[str, ...]:
        return ()  # it retrieves nothing, so there is nothing to count ahead

    def reset(self) -> None:
        pass

    def held_count(self) -> int:
        return 0

    def held_texts(self) -> Iterable[str]:
        return ()


SPEC = StrategySpec(name="no_memory", build=lambda options, context: NoMemory(), summary="Remembers nothing: the floor.")
