"""`evals export` then `evals import` moves a run between stores unchanged, on every fixture corpus.

A run is made with the CLI into one store, exported, imported into a fresh store, and the two
stores are compared row by row (the run, its corpus, its test points, its metrics) and through
their own `evals export` documents.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.cli import evals_output as evals

from evals.cli import cli
from evals.model.corpus import check_corpus

STRATEGIES = ("full_history", "bm25", "summary_buffer", "random_k")
# Every fixture folder that is a valid corpus, found rather than listed, so a new one is covered too.
CORPORA = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and check_corpus(p)[0] and not check_corpus(p)[1])
# The benchmark files the importers read, turned into corpora whose turns carry sessions and dates.
IMPORTED = (("locomo", "locomo_small.json"), ("longmemeval", "longmemeval_small.json"))
# What a run writes to the store: the rows of its own and of its corpus.
RUN_TABLES = ("runs", "test_points", "run_metrics", "run_turn_tokens", "run_latency", "test_point_answers")
CORPUS_TABLES = ("conversations", "corpus_test_points", "corpus_references")


def run_once(corpus: Path, strategy: str, store: Path) -> str:
    """The id of a run of ``strategy`` on ``corpus``, stored in ``store``."""
    output = evals("run", "--runner", strategy, "--corpus", corpus, "--store", store, "--force")
    return output.split()[1].rstrip(":")


def rows(store: Path, run_id: str) -> dict[str, list[tuple]]:
    """Every row the run and its corpus have in ``store``, table by table, in a fixed order."""
    with duckdb.connect(str(store), read_only=True) as con:
        digest = con.execute("SELECT corpus_digest FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
        out = {}
        for table in (*RUN_TABLES, *CORPUS_TABLES):
            key = "run_id" if table in RUN_TABLES else "corpus_digest"
            # When the row was written to this store is the one thing an import may not keep.
            columns = "* EXCLUDE (appended_at)" if table == "runs" else "*"
            query = f"SELECT {columns} FROM {table} WHERE {key} = ? ORDER BY ALL"
            out[table] = con.execute(query, [run_id if key == "run_id" else digest]).fetchall()
        return out


def round_trip(corpus: Path, strategy: str, tmp_path: Path) -> tuple[str, Path, Path]:
    """A run made into one store and imported, from its export, into a fresh one: (id, first, second)."""
    first, second, exported = tmp_path / "a.duckdb", tmp_path / "b.duckdb", tmp_path / "run.json"
    run_id = run_once(corpus, strategy, first)
    evals("export", run_id, "--store", first, "--output", exported)
    assert f"imported run {run_id}" in evals("import", exported, "--store", second)
    return run_id, first, second


def assert_same_run(run_id: str, first: Path, second: Path, tmp_path: Path) -> None:
    original, imported = rows(first, run_id), rows(second, run_id)
    assert original["runs"] and original["test_points"] and original["conversations"]
    for table in original:
        assert imported[table] == original[table], table
    documents = []
    for store in (first, second):
        path = tmp_path / f"{store.stem}-again.json"
        evals("export", run_id, "--store", store, "--output", path)
        documents.append(json.loads(path.read_text(encoding="utf-8")))
    assert documents[0] == documents[1]


def test_fixture_corpora_are_found():
    """The discovery finds the fixture corpora, sessions and all, and no folder that is not one."""
    assert {"corpus_small", "evidence_corpus", "sessions_corpus", "site_corpus", "golden"} <= set(CORPORA)
    assert not {"exports", "importers", "legacy", "stores"} & set(CORPORA)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("corpus", CORPORA)
def test_export_then_import_gives_the_same_rows(corpus, strategy, tmp_path):
    """A run exported and imported into a fresh store is accepted and gives the same rows and export."""
    run_id, first, second = round_trip(FIXTURES / corpus, strategy, tmp_path)
    assert_same_run(run_id, first, second, tmp_path)


@pytest.mark.parametrize("strategy", ("bm25", "full_history"))
@pytest.mark.parametrize(("kind", "source"), IMPORTED)
def test_imported_benchmark_corpus_round_trips(kind, source, strategy, tmp_path):
    """A run on a corpus made by `evals import-corpus` (sessions, dates, evidence sessions) moves between stores."""
    corpus = tmp_path / kind
    evals("import-corpus", kind, FIXTURES / "importers" / source, "--out", corpus)
    run_id, first, second = round_trip(corpus, strategy, tmp_path)
    assert_same_run(run_id, first, second, tmp_path)


def test_the_run_block_carries_sessions_dates_and_listed_evidence(tmp_path):
    """The export holds each turn's session and date and a test point's own evidence_sessions, as the corpus has them."""
    store, exported = tmp_path / "a.duckdb", tmp_path / "run.json"
    run_id = run_once(FIXTURES / "sessions_corpus", "bm25", store)
    evals("export", run_id, "--store", store, "--output", exported)
    block = json.loads(exported.read_text(encoding="utf-8"))["run"]["conversations"][0]
    source = json.loads((FIXTURES / "sessions_corpus" / "sessions.json").read_text(encoding="utf-8"))
    assert [(t.get("session"), t.get("date")) for t in block["turns"]] == [
        (t.get("session"), t.get("date")) for t in source["turns"]
    ]
    listed = [t["test_at"].get("evidence_sessions", []) for t in source["turns"] if t.get("test_at")]
    assert [p.get("evidence_sessions", []) for p in block["test_points"]] == listed


def test_an_export_without_sessions_keeps_its_shape(tmp_path):
    """A corpus with no sessions exports no session, date or evidence_sessions key in the run block (as before)."""
    store, exported = tmp_path / "a.duckdb", tmp_path / "run.json"
    run_id = run_once(FIXTURES / "corpus_small", "bm25", store)
    evals("export", run_id, "--store", store, "--output", exported)
    block = json.loads(exported.read_text(encoding="utf-8"))["run"]
    keys = {key for c in block["conversations"] for item in (*c["turns"], *c["test_points"]) for key in item}
    assert not keys & {"session", "date", "evidence_sessions"}


def test_an_edited_evidence_session_is_refused(tmp_path):
    """A test point's evidence_sessions among the original keys must be what the conversation gives."""
    store, exported = tmp_path / "a.duckdb", tmp_path / "run.json"
    run_id = run_once(FIXTURES / "sessions_corpus", "bm25", store)
    evals("export", run_id, "--store", store, "--output", exported)
    document = json.loads(exported.read_text(encoding="utf-8"))
    document["conversations"][0]["test_points"][0]["evidence_sessions"] = ["s2"]
    exported.write_text(json.dumps(document), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(exported), "--store", str(tmp_path / "b.duckdb")])
    assert result.exit_code == 1
    assert result.output.strip().endswith("evidence_sessions does not match the conversation's sessions; the file was altered")
    assert not (tmp_path / "b.duckdb").exists()


def exported_without_lme(tmp_path: Path) -> tuple[str, Path]:
    """A bm25 run on the sessions corpus as a store written before ``ndcg_any_lme`` existed holds it
    (its rows deleted), exported by this version: (run id, export file)."""
    store, exported = tmp_path / "old.duckdb", tmp_path / "old.json"
    run_id = run_once(FIXTURES / "sessions_corpus", "bm25", store)
    with duckdb.connect(str(store)) as con:
        con.execute("DELETE FROM run_metrics WHERE metric LIKE '%ndcg_any_lme%'")
    evals("export", run_id, "--store", store, "--output", exported)
    document = json.loads(exported.read_text(encoding="utf-8"))
    assert document["metrics"]["retrieval"] and not any(
        row["metric"] == "ndcg_any_lme" for row in document["metrics"]["retrieval"]
    )
    return run_id, exported


def test_a_run_stored_before_a_metric_existed_imports_and_gains_it(tmp_path):
    """An export lacking a retrieval metric this version computes (a run stored before ndcg_any_lme) imports,
    and the imported run has the metric, computed from its test points."""
    run_id, exported = exported_without_lme(tmp_path)
    evals("import", exported, "--store", tmp_path / "new.duckdb")
    with duckdb.connect(str(tmp_path / "new.duckdb"), read_only=True) as con:
        assert (
            con.execute(
                "SELECT count(*) FROM run_metrics WHERE run_id = ? AND metric LIKE '%ndcg_any_lme%'", [run_id]
            ).fetchone()[0]
            > 0
        )


def test_an_altered_retrieval_row_is_still_refused(tmp_path):
    """Rows an export may lack are no loophole: a row it does carry, edited, is refused."""
    _, exported = exported_without_lme(tmp_path)
    document = json.loads(exported.read_text(encoding="utf-8"))
    document["metrics"]["retrieval"][0]["value"] += 1e-6
    exported.write_text(json.dumps(document), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(exported), "--store", str(tmp_path / "new.duckdb")])
    assert result.exit_code == 1 and "'metrics' does not match the run's test points" in result.output
