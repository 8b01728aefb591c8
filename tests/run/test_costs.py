"""The costs a run measures: retrieve latency at the run's k, ingestion CPU, peak memory.

The corpus is tests/fixtures/sessions_corpus (twelve turns, three questions with evidence).
"""

from __future__ import annotations

import time

from helpers import FIXTURES
from helpers.strategies import KeepsTurns

from evals.model.corpus import load_corpus
from evals.run.playthrough import play_corpus

CORPUS = FIXTURES / "sessions_corpus"


class SlowWhenDeep(KeepsTurns):
    """Retrieves the last k turns; asked for more than 3 it takes 50 ms."""

    name = "slow_when_deep"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def retrieve(self, query: str, k: int) -> list:
        self.asked.append(k)
        if k > 3:
            time.sleep(0.05)
        return self.turns[-k:][::-1]


def test_retrieve_latency_is_of_the_call_at_k():
    """With cutoffs past k the timed call is the one at k: the deeper call, slow here, is not in the latency."""
    strategy = SlowWhenDeep()
    run = play_corpus(load_corpus(CORPUS), strategy, k=3, cutoffs=(1, 3, 10))
    assert strategy.asked == [3, 10] * 3
    assert len(run.timings.retrieve_ns) == 3 and max(run.timings.retrieve_ns) < 40_000_000


def test_the_records_at_k_are_the_deeper_rankings_first_k():
    """The deeper ranking still feeds every cutoff: ten ranked turns kept, the first three retrieved at k."""
    run = play_corpus(load_corpus(CORPUS), SlowWhenDeep(), k=3, cutoffs=(1, 3, 10))
    point = run.conversations[0].test_points[-1]
    assert len(point.ranked_turns) == 10 and point.retrieved_turns == point.ranked_turns[:3]


def test_without_deeper_cutoffs_one_call_per_test_point():
    """At k alone (the original harness's contract) each test point is one retrieve(q, k)."""
    strategy = SlowWhenDeep()
    play_corpus(load_corpus(CORPUS), strategy, k=3)
    assert strategy.asked == [3, 3, 3]
