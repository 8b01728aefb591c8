"""Failed runs in the store: their own table (schema 21), read back as written, and never made of bad input;
and what a run declares (schema 22)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
from helpers.cli import evals, stored_store
from helpers.errors import one_line_error
from helpers.stores import unchanged

from evals.store import MIGRATIONS, FailedRun, Store


def failed(run_id: str = "0123456789ab", **changes) -> FailedRun:
    values = dict(
        run_id=run_id, commit="a" * 40, dirty=False, model="none", date="2026-01-02",
        timestamp=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), strategy="bm25", strategy_config={"name": "bm25"},
        config_key="bm25-k5-x", k=5, seed=42, corpus_name="c", corpus_digest="d" * 64, package_version="0.1.0",
        python_version="3.11", duration_s=1.5, reason="strategy bm25: retrieve() raised KeyError: 'x'",
        strategy_source="built-in", benchmark=None, tuned_on=["locomo"], writes_with_llm=False,
    )  # fmt: skip
    return FailedRun(**{**values, **changes})


def test_a_failed_run_is_read_back_as_written(tmp_path: Path):
    """write_failed then failed_runs, get_failed and latest_failures give the same FailedRun; a second write of
    the same id is skipped."""
    with Store.open(tmp_path / "s.duckdb") as store:
        assert store.write_failed([failed()]) == [True]
        assert store.write_failed([failed()]) == [False]
        assert store.failed_runs() == store.latest_failures() == [failed()]
        assert store.get_failed("0123456789ab") == failed() and store.get_failed("nope") is None
        assert store.run_count() == 0  # a failure is never a run with figures


def test_only_a_configurations_latest_failure_is_on_the_board(tmp_path: Path):
    """Two failures of one configuration on one corpus: the boards show the newer one only."""
    newer = failed("bbbbbbbbbbbb", timestamp=datetime(2026, 2, 1, tzinfo=UTC), date="2026-02-01")
    with Store.open(tmp_path / "s.duckdb") as store:
        store.write_failed([failed(), newer])
        assert store.latest_failures() == [newer]
        assert store.failed_runs() == [newer, failed()]


def test_an_older_store_gains_failed_runs_and_declared_facts(tmp_path: Path):
    """A store at schema 18 upgrades to the newest schema: its runs read as declaring nothing (null), and it
    takes failed runs."""
    path = tmp_path / "old.duckdb"
    with Store.open(path, migrations=MIGRATIONS[:18]):
        pass
    assert Store.upgrade(path) == (18, MIGRATIONS[-1].version)
    with duckdb.connect(str(path), read_only=True) as con:
        columns = {row[0] for row in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'runs'").fetchall()}
        assert {"tuned_on", "writes_with_llm"} <= columns
        assert con.execute("SELECT count(*) FROM failed_runs").fetchone() == (0,)


def test_bad_input_is_no_failed_run(tmp_path: Path):
    """A malformed corpus is refused in one line and leaves the store exactly as it was: no failed run."""
    store = stored_store(tmp_path / "store")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.json").write_text('{"schema_version": "1", "id": "a"', encoding="utf-8")
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "recency", "--corpus", corpus, "--store", store))
    assert "a.json" in line
