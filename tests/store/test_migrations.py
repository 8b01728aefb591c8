"""A store written by an earlier version opens, migrates and keeps every number it had."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from helpers import FIXTURES

from evals.benchmarks import protocol_lexical, rule_of
from evals.judge.headline import headline_of
from evals.store import MIGRATIONS, Store, StoreError

STORES = FIXTURES / "stores"
OLD = json.loads((STORES / "schema5-summaries.json").read_text())


@pytest.fixture
def schema5(tmp_path: Path) -> Path:
    path = tmp_path / "schema5.duckdb"
    with gzip.open(STORES / "schema5.duckdb.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return path


@pytest.fixture
def migrated(schema5: Path) -> dict[str, object]:
    Store.upgrade(schema5)
    with Store.open(schema5, read_only=True) as store:
        return {s.run_id: s for s in store.runs()}


def test_schema5_store_is_refused_read_only_and_upgraded_by_migrate(schema5):
    """Reading an old store never writes it; an upgrade takes it to the current schema."""
    before = schema5.read_bytes()
    with pytest.raises(StoreError, match="has schema version 5"):
        Store.open(schema5, read_only=True)
    assert schema5.read_bytes() == before
    assert Store.upgrade(schema5) == (5, MIGRATIONS[-1].version)


def test_migrated_runs_keep_their_recall_strict_recall_and_mrr(migrated):
    """run_metrics is backfilled from the old columns: the same values and intervals as before."""
    for run_id, old in OLD.items():
        metrics = migrated[run_id].metrics
        recall, strict, mrr = metrics["recall"], metrics["strict_recall"], metrics["mrr"]
        assert (recall.value, recall.n) == (old["recall"], old["total"])
        assert (recall.low, recall.high) == pytest.approx((old["recall_low"], old["recall_high"]))
        assert (strict.value, strict.low, strict.high) == pytest.approx(
            (old["strict_recall"], old["strict_low"], old["strict_high"])
        )
        assert mrr.value == pytest.approx(old["mrr"])
        assert metrics["tokens_per_test_point"].value == pytest.approx(old["tokens_per_test_point"])


def test_migrated_runs_keep_their_answer_metrics(migrated):
    """Answer accuracy (with its interval), keyword accuracy and LLM tokens carry over; runs without answers have none."""
    for run_id, old in OLD.items():
        metrics = migrated[run_id].metrics
        if old["keyword_accuracy"] is None:
            assert not {"answer_accuracy", "keyword_accuracy", "llm_tokens_per_test_point"} & set(metrics)
            continue
        accuracy = metrics["answer_accuracy"]
        assert (accuracy.value, accuracy.low, accuracy.high) == pytest.approx(
            (old["accuracy"], old["accuracy_low"], old["accuracy_high"])
        )
        assert metrics["keyword_accuracy"].value == pytest.approx(old["keyword_accuracy"])
        assert metrics["llm_tokens_per_test_point"].value == pytest.approx(old["llm_tokens_per_test_point"])


def test_migrated_runs_get_evidence_recall_from_their_turn_references(migrated):
    """Evidence recall, any and all, is worked out for old runs on corpora with evidence turns."""
    for run_id, old in OLD.items():
        metrics = migrated[run_id].metrics
        if old["evidence"] is None:
            assert "evidence_recall_any" not in metrics
            continue
        for kind in ("any", "all"):
            value = metrics[f"evidence_recall_{kind}"]
            expected = old["evidence"][kind]
            assert (value.value, value.n) == (expected["recall"], expected["total"])
            assert [value.low, value.high] == pytest.approx(expected["interval"])


NOT_BACKFILLED = {"answer_f1", "answer_bleu1"}
# The protocols' answer figures (evals.judge.answer_metrics), declared after every migration.
NOT_BACKFILLED |= {
    "answer_score",
    "answer_task_averaged",
    "answer_abstention_accuracy",
    "answer_false_abstention",
    "answer_correct_abstention",
    "answer_unparsed",
    "answer_accuracy_evidence_found",
    "answer_accuracy_evidence_missed",
}
# Recall within context budgets (evals.judge.metrics._fair), declared after every migration.
NOT_BACKFILLED |= {
    f"{level}.{name}@{budget}tok"
    for level in ("turn", "session")
    for name in ("recall_any", "recall_frac")
    for budget in (256, 1024, 4096)
}
# The count of the test points a run played (the population a claim counting questions without evidence
# is over), declared after every migration.
NOT_BACKFILLED |= {"test_points"}


def test_migrated_metrics_equal_those_computed_afresh(schema5):
    """Backfilled SQL and the Python declarations agree: recomputing from the stored run gives the same values."""
    from evals.judge.metrics import ScoredRun, compute_metrics

    Store.upgrade(schema5)
    with Store.open(schema5, read_only=True) as store:
        for summary in store.runs():
            stored = store.get_run(summary.run_id)
            fresh = compute_metrics(
                ScoredRun(stored.run, stored.scores, stored.answers, protocol_lexical(stored.answers and stored.answers.protocol))
            )
            # Declared after the migrations: runs stored before them have no value ("—"), by design.
            fresh = {name: value for name, value in fresh.items() if name not in NOT_BACKFILLED}
            assert set(fresh) == set(summary.metrics)
            for name, value in fresh.items():
                kept = summary.metrics[name]
                assert (kept.value, kept.n, kept.low, kept.high) == pytest.approx((value.value, value.n, value.low, value.high))


def test_runs_made_before_cutoffs_display_their_new_metrics_as_not_recorded(schema5, tmp_path):
    """After migration 8 an old run has no cutoffs and no retrieval metrics, and its page says they were not recorded."""
    from evals.site import build_site

    Store.upgrade(schema5)
    with Store.open(schema5, read_only=True) as store:
        summaries = store.runs()
        run = store.get_run(summaries[0].run_id)
    assert all(s.cutoffs == [] and s.cutoff_rule is None for s in summaries)
    assert not [k for s in summaries for k in s.metrics if "@" in k]
    assert all(p.ranked_turns is None for c in run.run.conversations for p in c.test_points)
    out = tmp_path / "site"
    build_site(schema5, out)
    page = (out / "runs" / f"{summaries[0].run_id}.html").read_text(encoding="utf-8")
    assert "Retrieval at every cutoff" in page and "Not recorded: this run was made before" in page


LONGMEMEVAL_LABEL = "LongMemEval paper, BM25 (session level, _m)"


def test_longmemeval_ndcg_reference_rows_move_to_ndcg_any_lme(tmp_path):
    """Migration 9 renames the LongMemEval importer's stored ndcg_any rows to ndcg_any_lme; other rows keep their metric."""
    import duckdb

    path = tmp_path / "schema8.duckdb"
    with Store.open(path, migrations=MIGRATIONS[:8]):
        pass
    rows = [
        ("d", 0, LONGMEMEVAL_LABEL, "Wu et al.", "recall_any", "session", 5, 0.634, None),
        ("d", 1, LONGMEMEVAL_LABEL, "Wu et al.", "ndcg_any", "session", 5, 0.516, None),
        ("d", 2, "someone's own trec_eval figure", "a paper", "ndcg_any", "turn", 5, 0.5, None),
    ]
    con = duckdb.connect(str(path))
    con.executemany("INSERT INTO corpus_references VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    assert Store.upgrade(path) == (8, MIGRATIONS[-1].version)
    with Store.open(path, read_only=True) as store:
        stored = store.references("d")
    assert [(r.label, r.metric, r.value) for r in stored] == [
        (LONGMEMEVAL_LABEL, "recall_any", 0.634),
        (LONGMEMEVAL_LABEL, "ndcg_any_lme", 0.516),
        ("someone's own trec_eval figure", "ndcg_any", 0.5),
    ]


def test_migrated_runs_have_no_stored_rule_and_read_the_rule_registered_now(schema5):
    """Runs stored before runs.rule keep NULL there (nothing is backfilled) and are read by their corpus's rule now."""
    Store.upgrade(schema5)
    with duckdb.connect(str(schema5), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs WHERE rule IS NOT NULL").fetchone() == (0,)
    with Store.open(schema5, read_only=True) as store:
        summaries = store.runs()
    assert summaries and all(s.headline.rule == headline_of(rule_of(s.benchmark), s.metrics, s.k).rule for s in summaries)
