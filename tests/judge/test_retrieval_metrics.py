"""The field's retrieval metrics (turn and session level, every cutoff), against values worked out by hand.

The fixture (tests/fixtures/sessions_corpus) is one conversation of three
sessions of four turns (s1: turns 0-3, s2: 4-7, s3: 8-11) and three questions
(turns 12, 13, 14; the questions carry no session, and each is added to memory
after it is asked). recency ranks newest first, so with cutoffs 1,3,5,10:

* TP1 (turn 12), evidence turns {1, 9} (sessions {s1, s3}): turns ranked 11..2;
  sessions in rank order, first occurrence kept: s3, s2, s1.
* TP2 (turn 13), evidence turns {4, 6, 11} (sessions {s2, s3}): turns ranked
  12 (no session), 11..3; sessions s3, s2, s1.
* TP3 (turn 14, unanswerable, still counted), evidence turns {0, 2} (session
  {s1}): turns ranked 13, 12 (no sessions), 11..4; sessions s3, s2.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, ROOT
from helpers.strategies import KeepsTurns

from evals.cli import cli
from evals.judge.metrics import retrieval_metrics
from evals.judge.retrieval import ndcg_any, point_value
from evals.model.results import TestPointResult
from evals.run.evaluate import RunConfig, evaluate
from evals.strategies import Registry, StrategySpec

CORPUS = FIXTURES / "sessions_corpus"
CUTOFFS = (1, 3, 5, 10)


def dcg(*ranks: int) -> float:
    """trec_eval's DCG of binary relevances at ``ranks``: rank r counts 1/log2(r + 1)."""
    return sum(1 / math.log2(rank + 1) for rank in ranks)


def lme(*ranks: int) -> float:
    """LongMemEval's DCG of binary relevances at ``ranks``: rank 1 counts 1, rank r >= 2 counts 1/log2(r)."""
    return sum(1.0 if rank == 1 else 1 / math.log2(rank) for rank in ranks)


# Per test point, per (level, cutoff): (recall_any, recall_all, recall_frac, ndcg_any, ndcg_any_lme), by hand.
TP1 = {
    ("turn", 1): (0, 0, 0, 0, 0),  # [11]
    ("turn", 3): (1, 0, 1 / 2, dcg(3) / dcg(1, 2), lme(3) / lme(1, 2)),  # [11, 10, 9]: 9 at rank 3; ideal: 2 relevant
    ("turn", 5): (1, 0, 1 / 2, dcg(3) / dcg(1, 2), lme(3) / lme(1, 2)),
    ("turn", 10): (1, 0, 1 / 2, dcg(3) / dcg(1, 2), lme(3) / lme(1, 2)),  # turn 1 would be rank 11
    ("session", 1): (1, 0, 1 / 2, dcg(1) / dcg(1), 1.0),  # [s3]; ideal: min(2, 1) = 1 relevant
    ("session", 3): (1, 1, 1, dcg(1, 3) / dcg(1, 2), lme(1, 3) / lme(1, 2)),  # [s3, s2, s1]
    ("session", 5): (1, 1, 1, dcg(1, 3) / dcg(1, 2), lme(1, 3) / lme(1, 2)),  # only three sessions exist
    ("session", 10): (1, 1, 1, dcg(1, 3) / dcg(1, 2), lme(1, 3) / lme(1, 2)),
}
TP2 = {
    ("turn", 1): (0, 0, 0, 0, 0),  # [12]
    ("turn", 3): (1, 0, 1 / 3, dcg(2) / dcg(1, 2, 3), lme(2) / lme(1, 2, 3)),  # [12, 11, 10]: 11 at rank 2
    ("turn", 5): (1, 0, 1 / 3, dcg(2) / dcg(1, 2, 3), lme(2) / lme(1, 2, 3)),
    ("turn", 10): (1, 1, 1, dcg(2, 7, 9) / dcg(1, 2, 3), lme(2, 7, 9) / lme(1, 2, 3)),  # 11, 6, 4 at ranks 2, 7, 9
    ("session", 1): (1, 0, 1 / 2, 1.0, 1.0),  # [s3]
    ("session", 3): (1, 1, 1, dcg(1, 2) / dcg(1, 2), 1.0),  # [s3, s2, s1]
    ("session", 5): (1, 1, 1, 1.0, 1.0),
    ("session", 10): (1, 1, 1, 1.0, 1.0),
}
TP3 = {key: (0, 0, 0, 0, 0) for key in TP1}  # turns 0 and 2, session s1: none retrieved at 10
NAMES = ("recall_any", "recall_all", "recall_frac", "ndcg_any", "ndcg_any_lme")


def expected(level: str, name: str, cutoff: int) -> float:
    index = NAMES.index(name)
    return sum(tp[level, cutoff][index] for tp in (TP1, TP2, TP3)) / 3


def test_every_level_metric_and_cutoff_matches_the_hand_computed_value(tmp_path):
    """evals run --output holds metrics.retrieval for every (level, metric, k), equal to the hand-computed means."""
    out = tmp_path / "run.json"
    args = ["run", "--runner", "recency", "--corpus", str(CORPUS), "--store", str(tmp_path / "s.duckdb"), "--repo", str(tmp_path)]
    result = CliRunner().invoke(cli, [*args, "--cutoffs", "1,3,5,10", "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())["metrics"]["retrieval"]
    assert {(r["level"], r["metric"], r["k"]) for r in rows} == {
        (level, n, k) for level in ("turn", "session") for n in NAMES for k in CUTOFFS
    }
    for row in rows:
        assert row["n"] == 3
        assert row["value"] == pytest.approx(expected(row["level"], row["metric"], row["k"]), abs=1e-12), row
        assert row["low"] <= row["value"] <= row["high"]


def test_ranked_turns_and_sessions_are_in_the_json(tmp_path):
    """Each test point with evidence lists its ranking down to the deepest cutoff, turns and sessions, and past it as
    deep as the context budgets need (here every turn held: the memory ran out before 4,096 tokens), with each
    record's tokens."""
    out = tmp_path / "run.json"
    args = ["run", "--runner", "recency", "--corpus", str(CORPUS), "--store", str(tmp_path / "s.duckdb"), "--repo", str(tmp_path)]
    assert CliRunner().invoke(cli, [*args, "--cutoffs", "1,3,5,10", "--output", str(out)]).exit_code == 0
    third = json.loads(out.read_text())["conversations"][0]["test_points"][2]
    assert third["ranked_turns"] == [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
    assert third["ranked_sessions"] == [None, None, *["s3"] * 4, *["s2"] * 4, *["s1"] * 4]
    assert len(third["ranked_tokens"]) == 14
    assert third["evidence_sessions"] == ["s1"]


def test_ndcg_against_the_trec_eval_formula():
    """ndcg_any is trec_eval's ndcg_cut: DCG of binary relevances over the ideal DCG of min(|evidence|, k) hits."""
    assert ndcg_any(frozenset({"a", "b"}), ["x", "a", "y", "b"], 4) == pytest.approx(dcg(2, 4) / dcg(1, 2), abs=1e-12)
    assert ndcg_any(frozenset({"a"}), ["x", "y"], 10) == 0
    # A turn listed twice is relevant once, so NDCG never passes 1.
    assert ndcg_any(frozenset({"a"}), ["a", "a"], 2) == 1.0


def test_whole_list_counts_everything_at_every_cutoff():
    """full_history ignores k: at every cutoff its whole list counts (recall 1 wherever evidence was added)."""
    result = evaluate(RunConfig(strategy="full_history", corpus=CORPUS, cutoffs=CUTOFFS))
    values = retrieval_metrics(result.run)
    for level in ("turn", "session"):
        for k in CUTOFFS:
            assert values[f"{level}.recall_all@{k}"].value == 1.0


class OldRecency(KeepsTurns):
    """The last k turns, oldest first (as KeepsTurns keeps them): not prefix-stable, so it must be asked once per cutoff."""

    name = "old_recency"


def test_a_strategy_that_is_not_prefix_stable_is_asked_at_each_cutoff():
    """Declared prefix_stable=False, a strategy is asked once per cutoff, and each cutoff scores its own list."""
    registry = Registry([])
    registry._loaded["old_recency"] = StrategySpec(name="old_recency", build=lambda o, c: OldRecency(), prefix_stable=False)  # noqa: SLF001
    result = evaluate(RunConfig(strategy="old_recency", corpus=CORPUS, cutoffs=(1, 3, 10)), registry=registry)
    assert result.run.cutoff_rule == "per_cutoff"
    assert len(result.run.timings.retrieve_ns) == 3 * 4  # three test points, each asked at 1, 3, 5 (k) and 10
    first = result.run.conversations[0].test_points[0]
    assert first.retrieved_records == [f"turn {i} of session s{1 + i // 4}, fact number {i}" for i in range(7, 12)]
    # At 3 the list is turns 9, 10, 11 (oldest first): evidence turn 9 at rank 1. Read off the
    # deepest list (turns 2..11) it would have been turns 2, 3, 4 and no evidence at all.
    assert point_value(first, "ndcg_any", "turn", 3, result.run.cutoff_rule) == pytest.approx(dcg(1) / dcg(1, 2), abs=1e-12)
    assert point_value(first, "recall_any", "turn", 1, result.run.cutoff_rule) == 0.0


def test_a_point_without_evidence_is_left_out():
    """A test point with no evidence at a level has no value there (LoCoMo would score it 1)."""
    point = TestPointResult(turn_index=3, question="q", expected_fact="f", expected_keywords=["f"], retrieved_records=[])
    assert point_value(point, "recall_frac", "turn", 5, "prefix") is None


class SessionAware:
    """Keeps what add() was given, sessions and dates included."""

    name = "session_aware"

    def __init__(self) -> None:
        self.seen: list[tuple[int, str | None, str | None]] = []

    def add(self, role: str, content: str, *, turn: int, session: str | None = None, date: str | None = None) -> None:
        self.seen.append((turn, session, date))

    def retrieve(self, query: str, k: int) -> list[str]:
        return []

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return []

    def reset(self) -> None:
        pass


def test_a_strategy_that_takes_session_and_date_receives_them():
    """add() gets a turn's session and date when it accepts them; a turn without them passes neither."""
    built: list[SessionAware] = []

    def make(options, context):
        built.append(SessionAware())
        return built[-1]

    registry = Registry([])
    registry._loaded["session_aware"] = StrategySpec(name="session_aware", build=make)  # noqa: SLF001
    evaluate(RunConfig(strategy="session_aware", corpus=CORPUS), registry=registry)
    seen = built[0].seen
    assert seen[0] == (0, "s1", "2023/05/21 (Sat) 10:00") and seen[11][1] == "s3"
    assert seen[12] == (12, None, None)  # the first question: no session, no date


def test_a_strategy_without_those_keywords_is_not_given_them():
    """The contract's add(role, content, *, turn) still works: nothing it does not accept is passed."""
    result = evaluate(RunConfig(strategy="old_recency", corpus=CORPUS), registry=_old_recency())
    assert result.run.conversations[0].test_points[0].retrieved_records


def _old_recency() -> Registry:
    registry = Registry([])
    registry._loaded["old_recency"] = StrategySpec(name="old_recency", build=lambda o, c: OldRecency(), prefix_stable=False)  # noqa: SLF001
    return registry


def test_an_imported_locomo_corpus_gets_every_level_metric_and_cutoff(tmp_path):
    """import-corpus locomo, then run: metrics.retrieval holds turn and session level, four metrics, six cutoffs,
    and the corpus's published row is stored beside the run."""
    fixture = FIXTURES / "importers" / "locomo_small.json"
    corpus, out = tmp_path / "locomo", tmp_path / "run.json"
    assert CliRunner().invoke(cli, ["import-corpus", "locomo", str(fixture), "--out", str(corpus)]).exit_code == 0
    args = ["run", "--runner", "bm25", "--corpus", str(corpus), "--store", str(tmp_path / "s.duckdb"), "--repo", str(tmp_path)]
    result = CliRunner().invoke(cli, [*args, "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())["metrics"]["retrieval"]
    assert {(r["level"], r["metric"], r["k"]) for r in rows} == {
        (level, name, k) for level in ("turn", "session") for name in NAMES for k in (1, 3, 5, 10, 25, 50)
    }
    from evals.store import Store

    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        (summary,) = store.runs()
        published = store.references(summary.corpus_digest)
    assert [(r.metric, r.level, r.k, r.value) for r in published] == [
        ("recall_frac", "turn", 5, 0.588),
        ("recall_frac", "turn", 10, 0.675),
        ("recall_frac", "turn", 25, 0.799),
        ("recall_frac", "turn", 50, 0.848),
    ]


@pytest.mark.parametrize("given", ["0", "x", "1,,5", "10001", "-3"])
def test_a_bad_cutoff_is_refused_before_any_work(given, tmp_path):
    """--cutoffs names the bad entry and the range; nothing is written."""
    store = tmp_path / "s.duckdb"
    result = CliRunner().invoke(
        cli, ["run", "--runner", "recency", "--corpus", str(CORPUS), "--store", str(store), "--cutoffs", given]
    )
    assert result.exit_code == 2 and "is not a cutoff: each must be a whole number from 1 to 10000" in result.output
    assert not store.exists()


def test_an_unknown_leaderboard_metric_says_what_exists(tmp_path):
    """--metric with a name that is no metric is one line naming the forms it accepts."""
    store = tmp_path / "s.duckdb"
    args = ["run", "--runner", "recency", "--corpus", str(CORPUS), "--store", str(store), "--repo", str(tmp_path)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    result = CliRunner().invoke(cli, ["leaderboard", "--store", str(store), "--metric", "recall_some@5"])
    assert result.exit_code != 0 and "unknown metric 'recall_some@5'" in result.output and "recall_frac@25" in result.output
    ranked = CliRunner().invoke(cli, ["leaderboard", "--store", str(store), "--metric", "session.ndcg_any@3"])
    assert ranked.exit_code == 0 and "ndcg_any@3 (session)" in ranked.output.splitlines()[0]


def test_leaderboard_ranks_by_ndcg_any_lme(tmp_path):
    """--metric session.ndcg_any_lme@3 ranks by and leads with LongMemEval's NDCG."""
    store = tmp_path / "s.duckdb"
    args = [
        "run",
        "--runner",
        "recency",
        "--corpus",
        str(CORPUS),
        "--store",
        str(store),
        "--repo",
        str(tmp_path),
        "--cutoffs",
        "1,3,10",
    ]
    assert CliRunner().invoke(cli, args).exit_code == 0
    ranked = CliRunner().invoke(cli, ["leaderboard", "--store", str(store), "--metric", "session.ndcg_any_lme@3"])
    assert ranked.exit_code == 0 and "ndcg_any_lme@3 (session)" in ranked.output.splitlines()[0]
    expected = (lme(1, 3) / lme(1, 2) + 1.0 + 0.0) / 3  # TP1, TP2, TP3 at session level, k = 3 (ranked 10 deep)
    assert f"{expected:.3f}" in ranked.output.splitlines()[1]


def test_every_retrieval_metric_is_documented_and_can_be_named_by_a_reference_row():
    """Each retrieval metric is a row of the methodology doc's table, an entry of the methodology page, and a metric
    references.json may name (so a published figure can sit beside it)."""
    from typing import get_args

    from evals.judge.metrics import RETRIEVAL
    from evals.model.corpus import Metric

    root = ROOT
    readme = (root / "docs" / "methodology.md").read_text(encoding="utf-8")
    about = (root / "site_templates" / "about.html").read_text(encoding="utf-8")
    for name in RETRIEVAL:
        assert f"| `{name}@k` |" in readme and f"<strong>{name}@k</strong>" in about, name
    assert set(get_args(Metric)) == set(RETRIEVAL)
