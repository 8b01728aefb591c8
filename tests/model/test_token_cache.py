"""Tokens counted once per (tokenizer, text), ever: a counter given the run's cache keeps its counts there
by the text's digest, and the next run's counter takes them from it."""

from __future__ import annotations

from pathlib import Path

from evals.io.cache import Cache
from evals.model.tokens import PARALLEL_ABOVE, TOKENS_NAMESPACE, TokenCounter

# As many as a run worth a cache lookup counts (fewer are counted sooner than looked up).
TEXTS = [f"turn {i}: the user mentioned zorvex-{i} and a walk by the river" for i in range(PARALLEL_ABOVE)]


def test_second_counter_takes_every_count_from_the_cache(tmp_path: Path) -> None:
    """A second run's counter over the same texts finds every count in the cache, equal to the first's."""
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        first = TokenCounter()
        first.remember_in(cache)
        first.count_all(TEXTS)
        expected = first.counts(TEXTS)
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        second = TokenCounter()
        second.remember_in(cache)
        second.count_all(TEXTS)
        assert second.counts(TEXTS) == expected
        assert (cache.hits[TOKENS_NAMESPACE], cache.misses[TOKENS_NAMESPACE]) == (len(TEXTS), 0)
        assert second.tokenizer == "cl100k_base"


def test_counts_without_a_cache_are_the_same(tmp_path: Path) -> None:
    """Counts taken from the cache equal the counts made afresh without one."""
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        for _ in range(2):
            kept = TokenCounter()
            kept.remember_in(cache)
            kept.count_all(TEXTS)
    fresh = TokenCounter()
    fresh.count_all(TEXTS)
    assert kept.counts(TEXTS) == fresh.counts(TEXTS)
