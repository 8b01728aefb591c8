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


class DefersItsWrites(KeepsTurns):
    """Buffers what add() is given and writes it (a busy 20 ms of CPU) in flush()."""

    name = "defers_its_writes"

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []
        self.calls: list[str] = []

    def add(self, role: str, content: str, *, turn: int) -> None:
        self.pending.append(content)

    def flush(self) -> None:
        self.calls.append("flush")
        stop = time.thread_time_ns() + 20_000_000
        while time.thread_time_ns() < stop:
            pass
        self.turns.extend(self.pending)
        self.pending.clear()

    def retrieve(self, query: str, k: int) -> list:
        self.calls.append("retrieve")
        return self.turns[-k:]

    def reset(self) -> None:
        super().reset()
        self.pending.clear()


def test_a_buffered_write_is_made_before_the_next_test_point():
    """flush() comes before each test point's retrieve (turns were added since), and once at the conversation's end."""
    strategy = DefersItsWrites()
    play_corpus(load_corpus(CORPUS), strategy, k=2)
    assert strategy.calls == ["flush", "retrieve"] * 3 + ["flush"]


def test_a_buffered_writes_cpu_is_ingestion():
    """Four flushes of 20 ms of CPU over the corpus's turns: ingestion CPU counts them, retrieve latency does not."""
    run = play_corpus(load_corpus(CORPUS), DefersItsWrites(), k=2)
    assert run.timings.ingest_cpu_ns >= 80_000_000 and run.timings.turns_added == 15
    assert max(run.timings.retrieve_ns) < 20_000_000


def test_the_players_peak_resident_memory_is_recorded():
    """On Linux the play-through reads its process's high-water mark; a big allocation during the play shows in it."""

    class Hungry(KeepsTurns):
        def reset(self) -> None:
            super().reset()
            self.ballast = bytearray(200 * 2**20)  # 200 MiB, touched: resident

    run = play_corpus(load_corpus(CORPUS), Hungry(), k=2)
    assert run.timings.peak_rss_kib is not None and run.timings.peak_rss_kib > 200 * 1024


def _words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def test_a_ranking_is_asked_deeper_until_it_fills_the_budget():
    """Asked at k, then at the deepest cutoff, then at twice that until the tokens reach the budget or the memory
    runs out; the records' tokens are kept per rank and the cutoffs read the same ranking."""
    strategy = SlowWhenDeep()
    run = play_corpus(load_corpus(CORPUS), strategy, k=1, cutoffs=(1, 2), budget=30, count_tokens=_words)
    point = run.conversations[0].test_points[-1]
    tokens = point.ranked_tokens
    assert strategy.asked[-4:] == [1, 2, 4, 8] and len(tokens) == len(point.ranked_turns) == 8
    assert sum(tokens[:4]) < 30 <= sum(tokens) and point.cutoff_tokens == {1: tokens[0], 2: tokens[0] + tokens[1]}


def test_a_memory_that_runs_out_is_not_asked_again():
    """A memory that returns fewer records than asked has given all it has: no deeper call follows."""
    strategy = SlowWhenDeep()
    run = play_corpus(load_corpus(CORPUS), strategy, k=1, cutoffs=(1, 2), budget=10_000, count_tokens=_words)
    first = run.conversations[0].test_points[0]  # at turn 12: twelve turns held
    assert strategy.asked[:5] == [1, 2, 4, 8, 16] and len(first.ranked_tokens) == 12
