"""``full_history``: every earlier turn, always. The recall ceiling at unbounded cost."""

from __future__ import annotations

from collections.abc import Iterable

from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec


class FullHistory:
    name = "full_history"

    def __init__(self) -> None:
        self._turns: list[Message] = []

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._turns.append({"role": role, "content": content})

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return list(self._turns)  # every turn, ignoring k, as retrieve does

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        # k is ignored on purpose: the oracle sees the whole transcript, and
        # cutting it to k would understate the ceiling it stands for.
        return [t["content"] for t in self._turns]

    def reset(self) -> None:
        self._turns.clear()

    def held_count(self) -> int:
        return len(self._turns)

    def held_texts(self) -> Iterable[str]:
        return (t["content"] for t in self._turns)


SPEC = StrategySpec(
    name="full_history",
    build=lambda options, context: FullHistory(),
    ignores_k=True,
    summary="Every earlier turn, ignoring k: the recall ceiling at unbounded cost.",
)
