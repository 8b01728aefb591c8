"""The cache beside the store: entries survive reopening, first value wins, hits are counted."""

from __future__ import annotations

from evals.cache import Cache, cache_path_for, digest


def test_cache_file_sits_beside_the_store(tmp_path):
    """results.duckdb gets results.cache.duckdb in the same folder."""
    assert cache_path_for(tmp_path / "results.duckdb") == tmp_path / "results.cache.duckdb"


def test_entries_survive_reopening(tmp_path):
    """A value put by one process-lifetime is found by the next."""
    path = tmp_path / "results.cache.duckdb"
    with Cache.open(path) as cache:
        cache.put_many("embedding:m", {"k1": b"\x00\x01", "k2": b"v2"})
    with Cache.open(path) as cache:
        assert cache.get_many("embedding:m", ["k1", "k2", "k3"]) == {"k1": b"\x00\x01", "k2": b"v2"}
        assert cache.get("other", "k1") is None


def test_first_value_wins_and_hits_are_counted():
    """Putting a key twice keeps the first value; each distinct key asked counts once."""
    cache = Cache.in_memory()
    cache.put("ns", "k", b"first")
    cache.put("ns", "k", b"second")
    assert cache.get_many("ns", ["k", "k", "missing"]) == {"k": b"first"}
    assert (cache.hits["ns"], cache.misses["ns"]) == (1, 1)


def test_digest_separates_parts():
    """("ab", "c") and ("a", "bc") are different inputs."""
    assert digest("ab", "c") != digest("a", "bc")
    assert digest("a", b"b") == digest("a", "b")


def test_cache_file_is_created_on_first_use_only(tmp_path):
    """Opening costs nothing: a run that caches nothing leaves no file and holds no lock."""
    path = tmp_path / "results.cache.duckdb"
    cache = Cache.open(path)
    assert not path.exists()
    cache.put("ns", "k", b"v")
    assert path.exists()
    cache.close()


def test_unopenable_cache_names_the_file(tmp_path):
    """A cache path that cannot be created is a one-line error naming the file."""
    import pytest

    from evals.errors import EvalsError

    (tmp_path / "blocker").write_text("a file, not a folder")
    cache = Cache.open(tmp_path / "blocker" / "results.cache.duckdb")
    with pytest.raises(EvalsError, match="blocker/results.cache.duckdb: cannot open the cache"):
        cache.get("ns", "k")
