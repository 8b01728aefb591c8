"""``no_memory``: remembers nothing. The floor every memory must beat."""

from __future__ import annotations

from typing import Any

from evals.strategies.base import Message


class NoMemory:
    name = "no_memory"

    def add(self, role: str, content: str) -> None:
        pass

    def context_for(self, query: str, *, k: int = 5) -> list[Message]:
        return []

    def retrieve_records(self, query: str, *, k: int = 5) -> list[str]:
        return []

    def record_candidates(self, role: str, content: str) -> tuple[str, ...]:
        return ()  # it retrieves nothing, so there is nothing to count ahead

    def reset(self) -> None:
        pass

    def config_summary(self) -> dict[str, Any]:
        return {"name": self.name}
