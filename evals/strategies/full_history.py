"""``full_history``: every earlier turn, always. The recall ceiling at unbounded cost."""

from __future__ import annotations

from evals.strategies._turns import HeldTurns
from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec


class FullHistory(HeldTurns):
    name = "full_history"

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return list(self._turns)  # every turn, ignoring k, as retrieve does

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        # k is ignored on purpose: the oracle sees the whole transcript, and
        # cutting it to k would understate the ceiling it stands for.
        return [t["content"] for t in self._turns]


SPEC = StrategySpec(
    name="full_history",
    build=lambda options, context: FullHistory(),
    ignores_k=True,
    summary="Every earlier turn, ignoring k: the recall ceiling at unbounded cost.",
)
