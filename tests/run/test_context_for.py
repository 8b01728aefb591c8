"""What a strategy puts in front of the answer model (``context_for``), beside what it retrieved."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, build

from evals.model.corpus import load_corpus
from evals.run.playthrough import play_corpus

HISTORY = [f"the shed note number {i}" for i in range(15)]  # every turn shares "shed" with the question
QUESTION = "what does the shed note say"


def played(runner: str):
    """A strategy that has been given the 15 turns of HISTORY."""
    strategy = build(runner)
    strategy.reset()
    for text in HISTORY:
        strategy.add("user", text)
    return strategy


@pytest.mark.parametrize("runner", ["recency", "random_k", "bm25"])
def test_context_for_gives_k_turns(runner):
    """context_for(q, k=10) gives 10 turns when the history holds more, as retrieve does."""
    assert len(played(runner).context_for(QUESTION, k=10)) == 10


def test_mneme_context_for_cites_k_memories():
    """mneme's context_for(q, k=10) cites 10 retrieved memories when the history holds more."""
    (memories, *_) = played("mneme").context_for(QUESTION, k=10)
    assert memories["content"].count("[EPISODE id=") == 10


def random_k_records(corpus, *, ask: bool) -> list[list[str]]:
    """The records a random_k run retrieves, asking for context_for at each test point if ``ask``."""

    def ask_context(conversation_id, point, strategy, conversation):
        strategy.context_for(point.question, k=3)

    run = play_corpus(load_corpus(corpus), build("random_k"), k=3, on_test_point=ask_context if ask else None)
    return [p.retrieved_records for c in run.conversations for p in c.test_points]


def test_random_k_records_do_not_depend_on_context_for():
    """Asking random_k for its context at each test point (as --with-answers does) leaves every retrieval as it was."""
    corpus = FIXTURES / "site_corpus"
    assert random_k_records(corpus, ask=True) == random_k_records(corpus, ask=False)


def test_random_k_context_is_what_it_retrieved():
    """random_k's context_for gives exactly the turns its preceding retrieve drew for that question and k."""
    strategy = played("random_k")
    records = strategy.retrieve(QUESTION, 4)
    assert [m["content"] for m in strategy.context_for(QUESTION, k=4)] == records
