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


def test_a_counter_alone_reads_the_cache_and_hands_back_what_it_counted(tmp_path: Path) -> None:
    """A counter counting alone (a forked player's) takes what the cache holds, writes nothing there, and hands
    back the counts it made anew; kept by the cache's owner, they are there for the next run."""
    path = tmp_path / "cache.duckdb"
    half = len(TEXTS) // 2
    with Cache.open(path) as cache:
        first = TokenCounter()
        first.remember_in(cache)
        first.count_all(TEXTS[:half] + [f"{t} once more" for t in TEXTS[half:]])  # worth a lookup: PARALLEL_ABOVE texts
        owner = TokenCounter()
        owner.remember_in(cache)
    player = TokenCounter()
    player.remember_in(Cache.open(path))
    player.alone()
    player.count_all(TEXTS)
    fresh = player.fresh_counts()
    assert len(fresh) == len(TEXTS) - half and player.fresh_counts() == {}
    with Cache.open(path) as cache:
        assert cache.get_many(TOKENS_NAMESPACE, list(fresh)) == {}  # the player wrote nothing
        owner = TokenCounter()
        owner.remember_in(cache)
        owner.keep_counts([fresh])
        again = TokenCounter()
        again.remember_in(cache)
        again.count_all(TEXTS)
        assert cache.misses[TOKENS_NAMESPACE] == len(TEXTS) - half  # the first lookup's; the second found all
        assert again.counts(TEXTS) == player.counts(TEXTS)
