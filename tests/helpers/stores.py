"""Stores as the tests make and inspect them: provenance, the site fixture's store of real runs, and a store's files and rows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from evals.judge.scoring import Evaluation, score_run
from evals.model.provenance import SCRATCH_PREFIX, Provenance
from evals.model.tokens import EXACT, TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store

from . import FIXTURES

SITE_CORPUS = FIXTURES / "site_corpus"
STRATEGIES = ("no_memory", "full_history", "summary_buffer", "mneme", "recency")
OLD, NEW = "a" * 40, "b" * 40


def provenance(commit: str, dirty: bool = False) -> Provenance:
    """Where a test's run came from: ``commit``, clean unless ``dirty``, fixed versions."""
    return Provenance(commit=commit, dirty=dirty, package_version="0.1.0", mneme_version="1.0.0", python_version="3.11.7")


CLEAN = provenance("c0ffee" * 6 + "abcd")  # a clean commit, for stores whose runs are all from one


def at(evaluation: Evaluation, moment: datetime) -> Evaluation:
    """The same evaluation, stamped with a fixed start time so run order is deterministic."""
    return Evaluation(
        evaluation.corpus, evaluation.run.model_copy(update={"started_at": moment}), evaluation.scores, evaluation.answers
    )


def without_records(evaluation: Evaluation, conversation: int, point: int) -> Evaluation:
    """The evaluation with one test point's records emptied and everything rescored."""
    run = evaluation.run.model_copy(deep=True)
    run.conversations[conversation].test_points[point].retrieved_records = []
    counter = TokenCounter(exact=evaluation.scores.tokenizer == EXACT)
    return Evaluation(evaluation.corpus, run, score_run(run, counter))


def make_store(path: Path, corpus: Path = SITE_CORPUS, counter: TokenCounter | None = None) -> Path:
    """Five strategies at two commits over ``corpus``; at the newer one full_history's first test point misses."""
    start = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
    with Store.open(path) as store:
        for day, commit in enumerate((OLD, NEW)):
            for n, runner in enumerate(STRATEGIES):
                evaluation = evaluate(RunConfig(strategy=runner, corpus=corpus), counter=counter)
                if commit == NEW and runner == "full_history":
                    evaluation = without_records(evaluation, 0, 0)
                store.append(at(evaluation, start + timedelta(days=day, minutes=n)), provenance(commit))
    return path


def site_of(store: Path, tmp_path_factory) -> Path:
    """The site ``evals build-site`` makes from ``store``, in a fresh temporary folder."""
    from evals.site import build_site

    out = tmp_path_factory.mktemp("site") / "site"
    build_site(store, out)
    return out


def files_beside(store: Path) -> dict[str, bytes]:
    """The store file and every file beside it named after it (its WAL, its cache), byte for byte."""
    return {p.name: p.read_bytes() for p in sorted(store.parent.glob(f"{store.stem}*")) if p.is_file()}


def undo_copy(store: Path) -> Path:
    """Where a write keeps its copy of ``store``, as docs/store.md names it: ``.evals-scratch-<name>.undo`` beside it."""
    return store.with_name(f"{SCRATCH_PREFIX}{store.name}.undo")


@contextmanager
def unchanged(store: Path) -> Iterator[None]:
    """Asserts that what runs inside leaves ``store`` (and the files beside it) byte for byte as it was."""
    before = files_beside(store)
    yield
    assert files_beside(store) == before


def failed_rows(store: Path) -> list[tuple]:
    """(run id, strategy, k, reason) of every failed run the store keeps, oldest first."""
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute('SELECT run_id, strategy, k, reason FROM failed_runs ORDER BY "timestamp", run_id').fetchall()


@contextmanager
def kept_as_failed(store: Path) -> Iterator[list[tuple]]:
    """Asserts that what runs inside adds exactly one failed run to ``store`` and no run; yields a list that then
    holds the new failed run's (run id, strategy, k, reason)."""
    with duckdb.connect(str(store), read_only=True) as con:
        runs = con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()
    failed_before = failed_rows(store)
    added: list[tuple] = []
    yield added
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall() == runs
    new = [row for row in failed_rows(store) if row not in failed_before]
    assert len(new) == 1, new
    added.extend(new)


def stored_rows(store: Path, run_id: str) -> dict[str, list[tuple]]:
    """The rows a run wrote to each table, timings left out, in a stable order."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return {
            "runs": con.execute(
                "SELECT strategy, strategy_config, config_key, model, k, seed, corpus_digest, hits, total, context_tokens "
                "FROM runs WHERE run_id = ?",
                [run_id],
            ).fetchall(),
            "test_points": con.execute(
                "SELECT * EXCLUDE (run_id) FROM test_points WHERE run_id = ? ORDER BY conversation_id, turn_index", [run_id]
            ).fetchall(),
            "run_turn_tokens": con.execute(
                "SELECT * EXCLUDE (run_id) FROM run_turn_tokens WHERE run_id = ? ORDER BY conversation_id", [run_id]
            ).fetchall(),
            # Every metric, but the values of the measured ones (call latencies, the up-front embedding, ingestion
            # CPU, the peak memory of the process that played).
            "run_metrics": con.execute(
                "SELECT metric, level, cutoff, "
                "CASE WHEN contains(metric, 'latency') OR contains(metric, 'prefetch') OR metric IN "
                "('ingest_cpu_s_per_1k_turns', 'peak_rss_mb') THEN NULL ELSE [value, n, low, high] END "
                "FROM run_metrics WHERE run_id = ? ORDER BY ALL",
                [run_id],
            ).fetchall(),
        }
    finally:
        con.close()


def summaries(store_path: Path):
    """Every run the store at ``store_path`` holds, newest first."""
    with Store.open(store_path, read_only=True) as opened:
        return opened.runs()


def board(site: Path) -> Path:
    """The leaderboard of a site whose store holds one benchmark (index.html is the front page listing them)."""
    (page,) = site.glob("leaderboard-*.html")
    return page


def make_answers_store(path: Path) -> Path:
    """A store with recency and full_history runs answered and judged by the local chat server
    (tests/helpers/llm_server.py), plus a retrieval-only mneme run on the same corpus."""
    from .llm_server import LLMServer

    start = datetime(2025, 2, 1, 12, 0, tzinfo=UTC)
    with LLMServer() as server, Store.open(path) as opened:
        for n, runner in enumerate(("recency", "full_history")):
            config = RunConfig(strategy=runner, corpus=SITE_CORPUS, with_answers=True, judge=True, base_url=server.base_url)
            evaluation = evaluate(config, api_key="sk-site-test")
            opened.append(at(evaluation, start + timedelta(minutes=n)), provenance(NEW))
        opened.append(
            at(evaluate(RunConfig(strategy="mneme", corpus=SITE_CORPUS)), start + timedelta(minutes=5)), provenance(NEW)
        )
    return path
