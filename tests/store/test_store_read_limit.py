"""A store read that runs past DuckDB's buffer pool limit is done again without it, not failed (BEAM-10M's
build-site: a full_history run's rankings of 21,000 turns a test point, sorted, needed more than 64 MB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from helpers.cli import CORPUS_SMALL, evals, stored_store

from evals.store import Store


class _OutOfMemoryOnce:
    """A connection whose first query naming ``marker`` runs out of memory, as DuckDB says it."""

    def __init__(self, con: Any, marker: str) -> None:
        self.con, self.marker, self.failed = con, marker, False

    def execute(self, query: str, params: Any = None) -> Any:
        if self.marker in query and not self.failed:
            self.failed = True
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block of size 256.0 KiB")
        return self.con.execute(query, params or [])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def test_a_run_read_without_texts_is_read_past_the_limit(tmp_path):
    """get_run_outcomes (the compare pages' read) reads its test points again without the limit, then restores it."""
    path = stored_store(tmp_path, "full_history")
    with Store.open(path, read_only=True) as store:
        run_id = store.runs()[0].run_id
        expected = store.get_run_outcomes(run_id)
        (limit,) = store._con.execute("SELECT current_setting('memory_limit')").fetchone()
        store._con = _OutOfMemoryOnce(store._con, "FROM test_points tp JOIN corpus_test_points")
        again = store.get_run_outcomes(run_id)
        assert store._con.failed
        assert store._con.execute("SELECT current_setting('memory_limit')").fetchone() == (limit,)
    points = [[p.retrieved_turns for p in c.test_points] for c in again.run.conversations]
    assert points == [[p.retrieved_turns for p in c.test_points] for c in expected.run.conversations]


def test_the_same_ranking_read_is_read_past_the_limit(tmp_path):
    """topk_agreement (the leaderboard's "same ranking" read, which compares record texts: MemPalace's whole
    sessions ran the 64 MB pool out on real LoCoMo) reads again without the limit, then restores it."""
    path = stored_store(tmp_path, "bm25")
    result = evals("run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", path)
    assert result.exit_code == 0, result.output
    with Store.open(path, read_only=True) as store:
        ids = sorted(s.run_id for s in store.runs())
        expected = store.topk_agreement(ids, 3)
        (limit,) = store._con.execute("SELECT current_setting('memory_limit')").fetchone()
        store._con = _OutOfMemoryOnce(store._con, "list_slice(a.record_texts")
        again = store.topk_agreement(ids, 3)
        assert store._con.failed
        assert store._con.execute("SELECT current_setting('memory_limit')").fetchone() == (limit,)
    assert again == expected and len(again) == 1


def test_a_second_reader_opens_after_the_first_has_spilled(tmp_path):
    """Two readers of one store in one process share DuckDB's database; once the first has spilled to its
    temporary folder, the second opens on that folder (build-site on MemPalace's session records failed with
    "Cannot switch temporary directory"), and the folder goes when the last of them closes."""
    path = stored_store(tmp_path, "no_memory")
    with Store.open(path, read_only=True) as first:
        con = first._con
        con.execute("SET threads = 1; SET preserve_insertion_order = false; SET memory_limit = '32MB'")
        con.execute("SELECT count(*) FROM (SELECT i, random() AS r FROM range(5000000) t(i) ORDER BY r)").fetchone()
        (folder,) = con.execute("SELECT current_setting('temp_directory')").fetchone()
        with pytest.raises(duckdb.NotImplementedException, match="Cannot switch temporary directory"):
            con.execute(f"SET temp_directory = '{tmp_path / 'elsewhere'}'")  # the state the second reader meets
        with Store.open(path, read_only=True) as second:
            assert [s.run_id for s in second.runs()] == [s.run_id for s in first.runs()]
        assert Path(folder).is_dir()  # the first still holds it
    assert not Path(folder).exists()
