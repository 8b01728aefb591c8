"""Intervals, strict recall, rank/MRR and McNemar's test: by hand on tiny cases, in the JSON and in the store."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pytest
from helpers import FIXTURES
from helpers.stores import CLEAN

from evals.judge.metrics import MetricValue, ScoredRun, mrr, strict_recall
from evals.judge.scoring import Match, match
from evals.judge.stats import holm, mcnemar_exact, wilson_interval
from evals.run.evaluate import RunConfig, evaluate
from evals.store import MIGRATIONS, Store
from evals.views.exchange import export_document, read_export

GOLDEN = FIXTURES / "golden"


# -- metrics by hand --------------------------------------------------------------------------


def test_wilson_matches_the_formula_by_hand():
    """5 of 6: centre (5/6 + z²/12) / (1 + z²/6), half-width as Wilson wrote it."""
    z = 1.959963984540054
    n, p = 6, 5 / 6
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = wilson_interval(5, 6)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert (round(low, 4), round(high, 4)) == (0.4365, 0.9699)


def test_wilson_of_all_hits_reaches_one_and_of_nothing_is_none():
    """6 of 6 tops out at exactly 1; no test point has no interval."""
    assert wilson_interval(6, 6)[1] == 1.0
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(
    ("only_a", "only_b", "expected"),
    [
        (0, 0, 1.0),  # nothing discordant: no evidence
        (3, 0, 0.25),  # 2 * (1/2)^3
        (5, 0, 0.0625),  # 2 * (1/2)^5
        (4, 1, 0.375),  # 2 * (1 + 5) / 32
        (2, 2, 1.0),  # the tail passes one half: capped
        (1, 6, 0.125),  # 2 * (1 + 7) / 128
    ],
)
def test_mcnemar_exact_by_hand(only_a, only_b, expected):
    """Two-sided exact binomial on the discordant pairs, worked out by hand."""
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected)


def test_mcnemar_is_symmetric_and_handles_thousands():
    """Swapping the runs gives the same p; n in the thousands neither overflows nor underflows to nan."""
    assert mcnemar_exact(7, 2) == mcnemar_exact(2, 7)
    assert 0 < mcnemar_exact(1000, 900) < 0.05
    assert mcnemar_exact(3000, 0) < 1e-300


def test_holm_by_hand():
    """Holm's adjusted p-values, worked out by hand, come back in the order given."""
    # sorted: 0.01 * 3 = 0.03; 0.02 * 2 = 0.04; 0.04 * 1 = 0.04
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_holm_is_monotone_capped_and_handles_one_or_none():
    """An adjusted p never drops below a smaller p's, never exceeds 1; one test is left as is."""
    assert holm([0.03, 0.02]) == pytest.approx([0.04, 0.04])  # 0.03 * 1 would undercut 0.02 * 2
    assert holm([0.5, 0.9, 0.6]) == [1.0, 1.0, 1.0]
    assert holm([0.2]) == [0.2] and holm([]) == []


def test_strict_hit_needs_every_keyword():
    """Strict: all keywords across the records; a hit needs just one."""
    records = ["the dog is Biscuit", "we live in Lisbon"]
    assert match(["biscuit", "LISBON"], "", records).strict_hit
    assert not match(["biscuit", "porto"], "", records).strict_hit
    assert match(["biscuit", "porto"], "", records).hit


def test_strict_hit_without_keywords_is_the_fact_fallback():
    """No keywords: strict equals hit, the fact inside one record."""
    assert match([], "moved to Lisbon", ["we MOVED TO lisbon last year"]).strict_hit
    assert not match([], "moved to Lisbon", ["moved to", "Lisbon"]).strict_hit


def test_rank_is_that_of_the_first_matching_record():
    """Rank counts from 1; None when no record matches."""
    records = ["hello", "nothing", "Vim it is", "vim again"]
    assert match(["vim"], "", records).rank == 3
    assert match(["emacs"], "", records).rank is None
    assert match([], "it is", records).rank == 3


def test_keyword_straddling_two_records_is_a_hit_without_a_rank():
    """The joined text decides the hit; the rank needs one record to hold the keyword."""
    assert match(["vim\nlinux"], "", ["uses vim", "linux box"]) == Match(True, True, None)


def test_strict_rank_and_mrr_on_the_golden_corpus_by_hand():
    """full_history on the golden corpus: teal at rank 1; "mat" (not "rug") at rank 3, so not strict;
    the gate fact at rank 1; the fact split over two records has no rank. MRR (1 + 1/3 + 1 + 0) / 4."""
    scores = evaluate(RunConfig(strategy="full_history", corpus=GOLDEN)).scores
    points = [(p.hit, p.strict_hit, p.rank) for conv in scores.points for p in conv]
    assert points == [(True, True, 1), (True, False, 3), (True, True, 1), (False, False, None)]
    scored = ScoredRun(run=None, scores=scores)  # type: ignore[arg-type]
    assert strict_recall(scored).value == 2 / 4
    assert mrr(scored).value == pytest.approx((1 + 1 / 3 + 1 + 0) / 4)


# -- the JSON -------------------------------------------------------------------------------


@pytest.fixture
def full_document(corpus_small):
    from evals.views.report import legacy_json

    result = evaluate(RunConfig(strategy="full_history", corpus=corpus_small))
    return legacy_json(result.run, result.scores)


def test_json_has_recall_interval_beside_the_seed_keys(full_document):
    """metrics.recall_at_k_interval holds the Wilson interval of the seed's aggregate recall."""
    metrics = full_document["metrics"]
    block = metrics["recall_at_k_interval"]
    hits, total = metrics["recall_at_k"]["hits"], metrics["recall_at_k"]["total"]
    assert (block["low"], block["high"]) == wilson_interval(hits, total)
    assert (block["method"], block["level"]) == ("wilson", 0.95)


def test_json_has_strict_recall_mrr_and_per_point_ranks(full_document):
    """strict recall (with interval), MRR and each test point's strict hit and rank are in the JSON."""
    metrics = full_document["metrics"]
    strict = metrics["strict_recall_at_k"]
    assert strict["total"] == metrics["recall_at_k"]["total"] == 4
    assert (strict["interval"]["low"], strict["interval"]["high"]) == wilson_interval(strict["hits"], 4)
    points = metrics["per_test_point"]["002_pet"]
    assert [p["turn_index"] for p in points] == [8, 10]
    assert points[0] == {"turn_index": 8, "hit": True, "strict_hit": True, "rank": 1}
    assert metrics["mrr"]["per_conversation"]["002_pet"] == pytest.approx((1 + 1 / 3) / 2)


# -- the store ------------------------------------------------------------------------------


def _old_store(path: Path, corpus: Path) -> str:
    """A store at schema 2 (before intervals and strict recall), holding one full_history run."""
    with Store.open(path, migrations=MIGRATIONS[:2]) as store:
        run_id = store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus)), CLEAN)
    con = duckdb.connect(str(path))
    assert "strict_hits" not in {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
    con.close()
    return run_id


def test_old_store_upgrades_and_backfills_the_recall_interval(store_path, corpus_small):
    """An old run gets its recall interval; strict recall and MRR stay unknown (no value)."""
    run_id = _old_store(store_path, corpus_small)
    with Store.open(store_path) as store:
        assert store.schema_version == MIGRATIONS[-1].version
        summary = store.get_summary(run_id)
    con = duckdb.connect(str(store_path), read_only=True)
    low, high = con.execute("SELECT recall_low, recall_high FROM runs WHERE run_id = ?", [run_id]).fetchone()
    con.close()
    assert (low, high) == pytest.approx(wilson_interval(summary.hits, summary.total))
    assert summary.metric("recall") == MetricValue(summary.recall, summary.total, low, high)
    assert (summary.metric("strict_recall"), summary.metric("mrr"), summary.cache_hits) == (None, None, None)


def test_old_run_read_back_whole_has_strict_hits_and_ranks(store_path, corpus_small):
    """A run stored before schema 3 is read back with strict hits and ranks worked out from its records."""
    run_id = _old_store(store_path, corpus_small)
    Store.upgrade(store_path)
    fresh = evaluate(RunConfig(strategy="full_history", corpus=corpus_small)).scores
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id).scores
    assert stored.points == fresh.points


def test_new_run_stores_strict_hits_ranks_and_mrr(store_path, corpus_small):
    """run_metrics holds strict recall and MRR; test_points holds each point's strict hit and rank."""
    evaluation = evaluate(RunConfig(strategy="full_history", corpus=corpus_small))
    with Store.open(store_path) as store:
        run_id = store.append(evaluation, CLEAN, cache_hits=3, cache_misses=4)
        summary = store.get_summary(run_id)
        stored = store.get_run(run_id)
    scored = ScoredRun(evaluation.run, evaluation.scores)
    assert summary.metric("strict_recall") == strict_recall(scored)
    assert summary.metric("mrr").value == pytest.approx(mrr(scored).value)
    strict = summary.metric("strict_recall")
    assert (strict.low, strict.high) == wilson_interval(strict.successes, summary.total)
    assert (summary.cache_hits, summary.cache_misses) == (3, 4)
    assert stored.scores.points == evaluation.scores.points
    con = duckdb.connect(str(store_path), read_only=True)
    ranks = con.execute(
        'SELECT "rank" FROM test_points WHERE run_id = ? ORDER BY conversation_id, turn_index', [run_id]
    ).fetchall()
    con.close()
    assert [r[0] for r in ranks] == [p.rank for conv in evaluation.scores.points for p in conv]


def test_export_written_before_the_new_keys_still_imports(store_path, corpus_small, tmp_path):
    """An export lacking the new metrics keys and cache counts (an older evals wrote it) imports."""
    evaluation = evaluate(RunConfig(strategy="full_history", corpus=corpus_small))
    with Store.open(store_path) as store:
        run_id = store.append(evaluation, CLEAN)
        document = export_document(store.get_run(run_id))
    for key in ("recall_at_k_interval", "strict_recall_at_k", "mrr", "per_test_point"):
        del document["metrics"][key]
    del document["run"]["cache_hits"], document["run"]["cache_misses"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    record = read_export(old)
    assert record.summary.metric("strict_recall") == strict_recall(ScoredRun(evaluation.run, evaluation.scores))


def test_export_with_an_altered_rank_is_refused(store_path, corpus_small, tmp_path):
    """A per-test-point rank that the records do not give is caught like any altered number."""
    from evals.store import StoreError

    with Store.open(store_path) as store:
        run_id = store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus_small)), CLEAN)
        document = export_document(store.get_run(run_id))
    document["metrics"]["per_test_point"]["002_pet"][1]["rank"] = 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    with pytest.raises(StoreError, match="'metrics' does not match"):
        read_export(bad)
