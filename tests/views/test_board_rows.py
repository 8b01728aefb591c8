"""Every board's rows beside the ranked runs: a failed run is a row saying "failed: <reason>" (never a figure,
never ranked), a configuration's repeated runs show their spread, and declared facts travel with each run.
The failing and declaring plug-ins are tests/plugins/declaring_strategy.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import PLUGINS
from helpers.cli import CORPUS_SMALL, evals, evals_output
from helpers.errors import one_line_error

from evals.judge.metrics import MetricValue
from evals.store import FailedRun, RunSummary
from evals.views.board_rows import Spread, declared_marks, spreads

FAILING = "declaring_strategy:FAILING"
DECLARING = "declaring_strategy:SPEC"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with recency run twice, the declaring plug-in once, and the failing plug-in's failed run."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    path = tmp_path / "results.duckdb"
    for runner in ("recency", "recency", DECLARING):
        evals_output("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", path, "--force")
    one_line_error(evals("run", "--runner", FAILING, "--corpus", CORPUS_SMALL, "--store", path))
    return path


def test_a_failing_plugin_is_a_failed_row_on_the_leaderboard(store):
    """`evals leaderboard` shows the failing plug-in as a line saying why, below its corpus's ranked runs."""
    text = " ".join(evals_output("leaderboard", "--store", store).split())  # the line wraps at 99 columns
    assert "failing k=5: failed: strategy failing: retrieve(question, k=5) raised RuntimeError: the index is gone" in text


def test_a_failed_row_in_json_has_no_figure_and_no_rank(store):
    """In the leaderboard's JSON a failed run has its configuration, k, commit, date and reason, a null headline,
    no metrics and a null rank; every finished run has "failed": null."""
    rows = json.loads(evals_output("leaderboard", "--store", store, "--format", "json"))
    failed = [r for r in rows if r["failed"] is not None]
    assert [(r["strategy"], r["k"], r["headline"], r["metrics"], r["rank"]) for r in failed] == [("failing", 5, None, {}, None)]
    assert failed[0]["failed"].startswith("failed: strategy failing: retrieve(question, k=5) raised RuntimeError")
    assert {"commit", "date", "config_key", "corpus_digest", "reason"} <= failed[0].keys()
    assert all(r["headline"] is not None for r in rows if r["failed"] is None)


def test_evals_runs_lists_the_failed_run_newest_first(store):
    """`evals runs` lists the failed run, the newest, with "failed: <reason>" where a headline would be."""
    lines = evals_output("runs", "--store", store).splitlines()
    assert "failing" in lines[1] and "failed: strategy failing: retrieve" in lines[1]


def test_repeated_runs_show_their_spread(store):
    """recency run twice: the leaderboard's JSON gives its spread (n, min and max of the headline) and the table a
    "2 runs: 0.500–0.500" cell; a configuration run once has a null spread."""
    rows = {r["strategy"]: r for r in json.loads(evals_output("leaderboard", "--store", store, "--format", "json"))}
    assert rows["recency"]["spread"] == {"n": 2, "min": 0.5, "max": 0.5}
    assert rows["declaring"]["spread"] is None
    assert "2 runs: 0.500–0.500" in evals_output("leaderboard", "--store", store)


def test_declared_facts_are_stored_with_each_run(store):
    """A run keeps what its strategy's spec declares: the plug-in's tuned_on and writes_with_llm, recency's none."""
    rows = {r["strategy"]: r for r in json.loads(evals_output("leaderboard", "--store", store, "--format", "json"))}
    assert (rows["declaring"]["tuned_on"], rows["declaring"]["writes_with_llm"]) == (["locomo"], True)
    assert (rows["recency"]["tuned_on"], rows["recency"]["writes_with_llm"]) == ([], False)
    assert (rows["failing"]["tuned_on"], rows["failing"]["writes_with_llm"]) == (["locomo"], True)


def test_a_run_after_the_failure_takes_the_failed_row_off_the_board(store, tmp_path):
    """A board shows a configuration's failure only while it is the latest attempt: a finished run made after it
    replaces it (the failure stays in `evals runs`)."""
    board = tmp_path / "board"
    runs = json.loads(evals_output("runs", "--store", store, "--format", "json"))
    (failed_id,) = [r["run_id"] for r in runs if r["failed"] is not None]
    recency = next(r["strategy_config"] for r in runs if r["strategy"] == "recency")
    evals_output("export", failed_id, "--store", store, "--board", board)
    (path,) = board.rglob("*.json")

    def as_recency(run_id: str, timestamp: str) -> Path:
        """The failed run's file made a failure of recency's configuration at ``timestamp``."""
        document = json.loads(path.read_text(encoding="utf-8"))
        document["run_id"] = run_id
        document["provenance"]["timestamp"] = timestamp
        document["system"] = {"name": "recency", "configuration": recency, "source": "built-in", "model": "none"}
        written = tmp_path / f"{run_id}.json"
        written.write_text(json.dumps(document), encoding="utf-8")
        return written

    older, newer = (
        as_recency("0123456789ab", "2020-01-01T00:00:00+00:00"),
        as_recency("ba9876543210", datetime.now(UTC).isoformat()),
    )
    evals_output("import", older, "--store", store, "--corpus", CORPUS_SMALL)
    assert "recency k=5: failed" not in evals_output("leaderboard", "--store", store)
    assert "0123456789ab" in evals_output("runs", "--store", store)
    evals_output("import", newer, "--store", store, "--corpus", CORPUS_SMALL)  # now the latest attempt
    assert "recency k=5: failed" in evals_output("leaderboard", "--store", store)


def summary(run_id: str, recall: float | None, config: str = "bm25-k5-x") -> RunSummary:
    return RunSummary(
        run_id=run_id, commit="c", dirty=False, model="none", date="2026-01-01", timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        strategy="bm25", strategy_config={"name": "bm25"}, config_key=config, k=5, seed=42, corpus_name="c",
        corpus_dir="c", corpus_digest="d" * 64, tokenizer="cl100k_base", package_version="0", mneme_version=None,
        python_version="3", duration_s=1.0, conversation_count=1, hits=0, total=0, recall=recall, context_tokens=0,
        tokens_per_test_point=None, metrics={"recall": MetricValue(recall, 100)},
    )  # fmt: skip


def test_spread_is_of_the_configurations_runs_on_the_corpus_at_its_k():
    """Three runs of one configuration give n=3 with the lowest and highest keyword recall; another configuration's
    run counts for none of them, and a configuration run once has no spread."""
    runs = [summary("a", 0.612), summary("b", 0.627), summary("c", 0.62), summary("d", 0.9, config="bm25-k10-y")]
    found = spreads(runs, [runs[0], runs[3]])
    assert found == {"a": Spread(3, 0.612, 0.627)}
    assert found["a"].text() == "3 runs: 0.612–0.627"


def test_a_failed_run_names_its_reason():
    """A failed run reads as "failed: <reason>" on every board."""
    failed = FailedRun(
        run_id="a", commit="c", dirty=False, model="none", date="2026-01-01",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=1), strategy="bm25",
        strategy_config={"name": "bm25"}, config_key="bm25-k5-x", k=5, seed=42, corpus_name="c", corpus_digest="d" * 64,
        package_version="0", python_version="3", duration_s=0.5, reason="the index is gone",
    )  # fmt: skip
    assert failed.failure == "failed: the index is gone" and failed.as_dict()["failed"] == failed.failure


def test_declared_marks_say_what_each_means():
    """Tuned on a benchmark and writing with an LLM are two marks, each with its explanation; none declared, none shown."""
    marks = declared_marks(["locomo"], True)
    assert [mark for mark, _ in marks] == ["tuned", "LLM writes"]
    assert "locomo" in marks[0][1] and "LLM" in marks[1][1]
    assert declared_marks([], False) == declared_marks(None, None) == []
