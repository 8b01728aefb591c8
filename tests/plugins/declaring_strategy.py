"""Test-only strategies that declare facts about themselves: recency, tuned on LoCoMo and writing with an LLM
(``declaring_strategy:SPEC``), and the same declarations on a memory whose every retrieve raises
(``declaring_strategy:FAILING``). Referenced with tests/plugins on the path."""

from __future__ import annotations

from evals.strategies import Recency, StrategySpec


class Failing(Recency):
    name = "failing"

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        raise RuntimeError("the index is gone")


SPEC = StrategySpec(name="declaring", build=lambda options, context: Recency(), tuned_on=("locomo",), writes_with_llm=True)
FAILING = StrategySpec(name="failing", build=lambda options, context: Failing(), tuned_on=("locomo",), writes_with_llm=True)
