"""``recency``: the last k turns, newest first. What a plain sliding window gives.

Newest first is the window's ranking: the turn just said is the most likely
to matter, and the last k turns are then the first k records at any k, so
every cutoff reads off one retrieval (``prefix_stable``). ``context_for``
puts them back in conversation order, as a window would show them.
"""

from __future__ import annotations

from evals.strategies._turns import HeldTurns
from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec


class Recency(HeldTurns):
    name = "recency"

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return self._turns[-k:]

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return [t["content"] for t in reversed(self._turns[-k:])]


SPEC = StrategySpec(
    name="recency",
    build=lambda options, context: Recency(),
    # "order" names the ranking, so runs from before it was newest first stay a configuration of their own.
    describe=lambda options, context: {"name": "recency", "order": "newest_first"},
    summary="The last k turns, newest first: a plain sliding window.",
)
