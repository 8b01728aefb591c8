"""``recency``: the last k turns, oldest first. What a plain sliding window gives."""

from __future__ import annotations

from typing import Any

from evals.strategies.base import Message


class Recency:
    name = "recency"

    def __init__(self) -> None:
        self._turns: list[Message] = []

    def add(self, role: str, content: str) -> None:
        self._turns.append({"role": role, "content": content})

    def context_for(self, query: str, *, k: int = 5) -> list[Message]:
        return self._turns[-k:]

    def retrieve_records(self, query: str, *, k: int = 5) -> list[str]:
        return [t["content"] for t in self._turns[-k:]]

    def reset(self) -> None:
        self._turns.clear()

    def config_summary(self) -> dict[str, Any]:
        return {"name": self.name}
