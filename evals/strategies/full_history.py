"""``full_history``: every earlier turn, always. The recall ceiling at unbounded cost."""

from __future__ import annotations

from typing import Any

from evals.strategies.base import Message


class FullHistory:
    name = "full_history"

    def __init__(self) -> None:
        self._turns: list[Message] = []

    def add(self, role: str, content: str) -> None:
        self._turns.append({"role": role, "content": content})

    def context_for(self, query: str, *, k: int = 5) -> list[Message]:
        return list(self._turns)  # every turn, ignoring k, as retrieve_records does

    def retrieve_records(self, query: str, *, k: int = 5) -> list[str]:
        # k is ignored on purpose: the oracle sees the whole transcript, and
        # cutting it to k would understate the ceiling it stands for.
        return [t["content"] for t in self._turns]

    def reset(self) -> None:
        self._turns.clear()

    def config_summary(self) -> dict[str, Any]:
        return {"name": self.name}
