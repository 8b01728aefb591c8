"""The cache beside the store: entries survive reopening, first value wins, hits are counted."""

from __future__ import annotations

import pytest

from evals.io.cache import Cache, cache_path_for, digest


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


def test_first_value_wins_and_hits_are_counted(tmp_path):
    """Putting a key twice keeps the first value; each distinct key asked counts once."""
    cache = Cache.open(tmp_path / "c.duckdb")
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


class _Counting:
    """Mneme's real hash embedder, counting the texts it is asked to embed and failing on request."""

    def __init__(self, fail_on: str | None = None) -> None:
        import mneme

        self._inner = mneme.HashEmbedder(dimensions=16)
        self.dimensions = 16
        self.embedded: list[str] = []
        self.fail_on = fail_on

    def embed(self, texts):
        if self.fail_on in texts:
            raise RuntimeError("the endpoint went away")
        self.embedded.extend(texts)
        return self._inner.embed(list(texts))


def test_embeddings_are_computed_in_cached_chunks_with_progress(monkeypatch, tmp_path):
    """The up-front embedding reports progress per chunk, and a chunk that fails keeps the
    chunks before it in the cache, so the retry computes only the rest."""
    import pytest

    import evals.strategies.embedders as embedders

    monkeypatch.setattr(embedders, "PREFETCH_CHUNK", 3)
    texts = [f"turn {i}" for i in range(7)]
    cache = Cache.open(tmp_path / "c.duckdb")
    failing = embedders.CachingEmbedder(_Counting(fail_on="turn 6"), "counting", cache)
    with pytest.raises(RuntimeError):
        failing.prefetch(texts)
    steps: list[tuple[int, int, str]] = []
    retry_inner = _Counting()
    retry = embedders.CachingEmbedder(retry_inner, "counting", cache)
    retry.prefetch(texts, lambda done, total, what: steps.append((done, total, what)))
    assert retry_inner.embedded == ["turn 6"]
    assert steps == [(1, 1, "embeddings")]
    fresh = _Counting()
    steps.clear()
    embedders.CachingEmbedder(fresh, "counting", None).prefetch(texts, lambda *step: steps.append(step))
    assert steps == [(3, 7, "embeddings"), (6, 7, "embeddings"), (7, 7, "embeddings")]
    assert retry.embed(texts) == embedders.CachingEmbedder(_Counting(), "counting", None).embed(texts)


def _filled(path, count: int = 3000) -> dict[str, bytes]:
    """A cache file at ``path`` holding ``count`` entries of 1,536 bytes (about 5 MB: many of DuckDB's blocks)."""
    import hashlib

    entries = {f"k{i}": hashlib.sha512(str(i).encode()).digest() * 24 for i in range(count)}
    with Cache.open(path) as cache:
        cache.put_many("embedding:m", entries)
    return entries


def _cut_at_a_block_boundary(path) -> None:
    import os

    os.truncate(path, 3 * 4096 + 2 * 262_144)  # DuckDB's three headers, then two whole 256 KiB blocks


def _bytes_flipped(path) -> None:
    with open(path, "r+b") as file:
        file.seek(3 * 4096 + 262_144 + 100)
        data = file.read(16)
        file.seek(3 * 4096 + 262_144 + 100)
        file.write(bytes(b ^ 0xFF for b in data))


def _rewritten(schema: str):
    def rewrite(path) -> None:
        from evals.io.locking import open_duckdb

        path.unlink()
        con = open_duckdb(path)
        con.execute(schema)
        con.close()

    return rewrite


BAD_CACHES = {
    "cut at a block boundary": _cut_at_a_block_boundary,
    "bytes flipped": _bytes_flipped,
    "other column types": _rewritten(
        "CREATE TABLE cache_entries (namespace VARCHAR, key INTEGER, value VARCHAR, created_at DATE)"
    ),
    "a future version's table": _rewritten(
        "CREATE TABLE cache_entries (namespace VARCHAR, key VARCHAR, value BLOB, created_at TIMESTAMP, model VARCHAR)"
    ),
}


@pytest.mark.parametrize("spoil", BAD_CACHES.values(), ids=BAD_CACHES.keys())
def test_a_bad_cache_is_set_aside_and_recomputed(tmp_path, caplog, spoil):
    """A damaged cache, or one of another shape, is renamed beside itself, said in one warning line, and a new one
    started: what it held is looked up as missing and written afresh."""
    path = tmp_path / "results.cache.duckdb"
    entries = _filled(path)
    spoil(path)
    spoiled = path.read_bytes()
    with Cache.open(path) as cache:
        assert cache.get_many("embedding:m", list(entries)) == {}
        cache.put_many("embedding:m", entries)
    with Cache.open(path) as cache:
        assert cache.get_many("embedding:m", list(entries)) == entries
    (aside,) = tmp_path.glob("results.cache.duckdb.bad-*")
    assert aside.read_bytes() == spoiled
    (line,) = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert line.startswith(f"warning: cache {path} ")
    assert line.endswith(f"set aside as {aside}, and what it held is computed again")


def test_a_results_store_is_never_used_as_the_cache(store):
    """A results store named as the cache is refused in one line naming it, and left byte for byte as it was."""
    from helpers.stores import unchanged

    from evals.errors import EvalsError

    with unchanged(store), pytest.raises(EvalsError) as caught, Cache.open(store) as cache:
        cache.put("embedding:m", "k", b"v")
    assert str(caught.value).startswith(f"cache {store} holds tables other than a cache's (")
    assert "it is not a cache" in str(caught.value)
    assert list(store.parent.glob("*.bad-*")) == []


def test_a_reader_finds_what_the_cache_holds_and_never_writes(tmp_path) -> None:
    """A cache's reader finds its entries; it refuses to write; an absent or locked file reads as empty."""
    from evals.errors import EvalsError

    path = tmp_path / "cache.duckdb"
    assert Cache.open(path).reader().get_many("ns", ["a"]) == {}  # no file yet
    with Cache.open(path) as cache:
        cache.put_many("ns", {"a": b"1", "b": b"2"})
        locked = cache.reader()
        assert locked.get_many("ns", ["a"]) == {}  # the owner holds it for writing
    reader = Cache.open(path).reader()
    assert reader.get_many("ns", ["a", "c"]) == {"a": b"1"}
    assert (reader.hits["ns"], reader.misses["ns"]) == (1, 1)
    with pytest.raises(EvalsError, match="reading only"):
        reader.put_many("ns", {"c": b"3"})
    reader.close()
