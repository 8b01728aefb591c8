"""What a strategy puts in front of the answer model (``context_for``), beside what it retrieved."""

from __future__ import annotations

import pytest

from evals.strategies import build_strategy

HISTORY = [f"the shed note number {i}" for i in range(15)]  # every turn shares "shed" with the question
QUESTION = "what does the shed note say"


def played(runner: str):
    """A strategy that has been given the 15 turns of HISTORY."""
    strategy = build_strategy(runner)
    strategy.reset()
    for text in HISTORY:
        strategy.add("user", text)
    return strategy


@pytest.mark.parametrize("runner", ["recency", "random_k", "bm25"])
def test_context_for_gives_k_turns(runner):
    """context_for(q, k=10) gives 10 turns when the history holds more, as retrieve_records does."""
    assert len(played(runner).context_for(QUESTION, k=10)) == 10


def test_mneme_context_for_cites_k_memories():
    """mneme's context_for(q, k=10) cites 10 retrieved memories when the history holds more."""
    (memories, *_) = played("mneme").context_for(QUESTION, k=10)
    assert memories["content"].count("[EPISODE id=") == 10
