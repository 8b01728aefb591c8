"""Equal footing: recall at fixed context budgets beside recall at k, a count of retrievals longer than
asked for, and a flag on a run whose k reaches every session of a conversation.

The corpus is tests/fixtures/sessions_corpus (three sessions s1-s3 of four turns, questions at turns 12-14 with
evidence {1, 9}, {4, 6, 11} and {0, 2}); the session-document strategy is tests/plugins/session_documents.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner
from helpers import FIXTURES, PLUGINS
from helpers.strategies import KeepsTurns

from evals.cli import cli
from evals.judge.metrics import ScoredRun, compute_metrics
from evals.judge.retrieval import budget_value
from evals.model.results import TestPointResult
from evals.run.evaluate import RunConfig, evaluate
from evals.strategies import Registry, StrategySpec

CORPUS = FIXTURES / "sessions_corpus"
sys.path.insert(0, str(PLUGINS))
import session_documents  # noqa: E402


def _point(ranked: list[int]) -> TestPointResult:
    return TestPointResult(
        turn_index=10, question="q", expected_fact="f", expected_keywords=["f"], retrieved_records=["a"] * len(ranked),
        evidence_turns=[5], evidence_sessions=["s"], retrieved_turns=ranked, ranked_turns=ranked,
        ranked_sessions=["s" if t == 5 else "o" for t in ranked],
    )  # fmt: skip


def test_the_record_that_crosses_the_budget_does_not_count():
    """Evidence in the second record, 200 + 100 tokens: not within 256 tokens, found within 1,024."""
    point = _point([3, 5])
    assert budget_value(point, [200, 100], 2, "turn", 256, "recall_any") == 0.0
    assert budget_value(point, [200, 100], 2, "turn", 1024, "recall_any") == 1.0


def test_a_budget_reads_only_the_records_within_k():
    """Records past k are never scored: a ranking deeper than the run's records is read only as far as they go."""
    point = _point([3, 4, 5])  # the ranking kept to a deeper cutoff; the run's k records are the first two
    assert budget_value(point, [10, 10], 2, "turn", 4096, "recall_any") == 0.0


def test_session_level_budget_reads_the_records_sessions():
    """At session level a record counts for the sessions it holds."""
    assert budget_value(_point([3, 5]), [10, 10], 2, "session", 256, "recall_frac") == 1.0


def _registry() -> Registry:
    registry = Registry()
    registry._loaded["session_documents"] = session_documents.SPEC  # noqa: SLF001
    registry._loaded["greedy"] = StrategySpec(name="greedy", build=lambda o, c: Greedy())  # noqa: SLF001
    return registry


def test_every_run_reports_recall_at_each_budget_and_level():
    """A run's metrics hold turn and session recall_any and recall_frac at 256, 1,024 and 4,096 tokens."""
    evaluation = evaluate(RunConfig(strategy="recency", corpus=CORPUS, k=3), cache=None)
    metrics = compute_metrics(ScoredRun(evaluation.run, evaluation.scores))
    for level in ("turn", "session"):
        for name in ("recall_any", "recall_frac"):
            for budget in (256, 1024, 4096):
                assert f"{level}.{name}@{budget}tok" in metrics


def test_session_documents_and_turns_stand_side_by_side_at_a_budget():
    """Within 4,096 tokens both memories' rankings are read past k=3, as deep as they go (records are short here), so
    every test point finds evidence at that budget, whatever recall at k says."""
    for strategy in ("session_documents", "recency"):
        evaluation = evaluate(RunConfig(strategy=strategy, corpus=CORPUS, k=3, cutoffs=(3,)), registry=_registry(), cache=None)
        metrics = compute_metrics(ScoredRun(evaluation.run, evaluation.scores))
        assert metrics["turn.recall_any@4096tok"].value == 1.0 >= metrics["turn.recall_any@3"].value, strategy


class Greedy(KeepsTurns):
    """Returns twice the records it is asked for."""

    name = "greedy"

    def retrieve(self, query: str, k: int) -> list[str]:
        return self.turns[::-1][: 2 * k]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return []


def test_retrievals_longer_than_asked_are_counted():
    """Every retrieval that returned more than asked is counted, and the records kept are the first k."""
    config = RunConfig(strategy="greedy", corpus=CORPUS, k=2, cutoffs=())  # asked at k alone
    evaluation = evaluate(config, registry=_registry(), cache=None)
    assert evaluation.run.long_retrievals == 3  # three test points, each asked once
    assert all(len(p.retrieved_records) == 2 for p in evaluation.run.conversations[0].test_points)
    assert compute_metrics(ScoredRun(evaluation.run, evaluation.scores))["retrievals_over_k"].value == 3


def test_a_point_answered_with_everything_the_memory_held_is_counted():
    """The session documents held are three at the first test point and more at the later ones (each question
    turn adds to them): k=3 returns everything held at the first point only, k=10 at all three, k=2 at none;
    recency at k=3 holds twelve turns or more and returns three, so never everything."""
    registry = _registry()
    cases = (("session_documents", 3, 1), ("session_documents", 10, 3), ("session_documents", 2, 0), ("recency", 3, 0))
    for strategy, k, whole in cases:
        config = RunConfig(strategy=strategy, corpus=CORPUS, k=k, cutoffs=())
        evaluation = evaluate(config, registry=registry, cache=None)
        found = compute_metrics(ScoredRun(evaluation.run, evaluation.scores))["points_returning_all"]
        assert (found.value, found.n) == (whole, 3), (strategy, k)


def test_a_k_reaching_every_session_is_counted():
    """k=3 reaches the three sessions of the conversation; k=2 does not."""
    for k, reaches in ((3, 1), (2, 0)):
        evaluation = evaluate(RunConfig(strategy="recency", corpus=CORPUS, k=k), cache=None)
        assert compute_metrics(ScoredRun(evaluation.run, evaluation.scores))["k_reaches_all"].value == reaches


def _run(tmp_path: Path, *args: str) -> str:
    store = str(tmp_path / "s.duckdb")
    result = CliRunner().invoke(
        cli, ["run", "--corpus", str(CORPUS), "--store", store, "--repo", str(tmp_path), "--no-cache", *args]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_evals_run_says_how_often_a_strategy_returned_more_than_k(tmp_path):
    """`evals run` prints the count of retrievals cut to k."""
    output = _run(tmp_path, "--runner", "test_fair_play:Greedy", "--k", "2", "--cutoffs", "2")
    assert "note: 3 of 3 retrievals returned more records than asked for" in output


def test_the_leaderboard_ranks_by_a_budget(tmp_path):
    """`evals leaderboard --metric turn.recall_any@1024tok` ranks by that budget's figure."""
    _run(tmp_path, "--runner", "no_memory", "--k", "1")  # nothing, at any budget (0 of 3)
    _run(tmp_path, "--runner", "recency", "--k", "1")  # its whole ranking (every turn, newest first) fits: 3 of 3
    store = str(tmp_path / "s.duckdb")
    result = CliRunner().invoke(cli, ["leaderboard", "--store", store, "--metric", "turn.recall_any@1024tok", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["strategy"] for r in rows] == ["recency", "no_memory"]
    assert [r["metrics"]["turn.recall_any@1024tok"]["value"] for r in rows] == [1.0, 0.0]


def test_a_budget_reads_the_ranking_past_k_where_its_tokens_were_kept():
    """With each ranked record's tokens kept (a ranking deep enough for the budgets), a budget reads past k."""
    point = _point([3, 4, 5])
    point.ranked_tokens = [10, 10, 10]
    assert budget_value(point, [10, 10], 2, "turn", 4096, "recall_any") == 1.0
    assert budget_value(point, [10, 10], 2, "turn", 20, "recall_any") == 0.0
