"""Retrieval metrics: the headline's turn-level recall_any at the run's k and its neighbours, the original
harness's keyword recall, MRR, evidence recall over the answerable points, and tokens per test point."""

from __future__ import annotations

from collections.abc import Callable
from math import fsum

from evals.judge.metrics._registry import (
    MEAN,
    PROPORTION,
    RETRIEVAL,
    TOKENS,
    MetricValue,
    Point,
    ScoredRun,
    metric,
    point_metric,
    proportion,
    retrieval_key,
)
from evals.judge.retrieval import turn2session
from evals.model.results import WHOLE_LIST, RunResult

# -- retrieval ---------------------------------------------------------------------------------

HEADLINE = "turn.recall_any@k"  # what a corpus with evidence is ranked by (evals.views.tables.headline)

# The headline for a corpus with evidence: turn-level recall_any at the run's k, then NDCG and
# session-level recall_all; the keyword recall of the original harness follows.


def _at_run_k(name: str, level: str) -> Callable[[Point], float | None]:
    """The retrieval metric at the run's own k: the leaderboard's headline columns."""
    return lambda point: point.retrieval_value(name, level, point.k)


for _name, _level, _label in (
    ("recall_any", "turn", "recall_any@k"),
    ("ndcg_any", "turn", "NDCG@k"),
    ("recall_all", "session", "session recall_all@k"),
):
    point_metric(
        retrieval_key(_name, _level, "k"),
        label=_label,
        kind=RETRIEVAL[_name].kind,
        higher_is_better=True,
        optional=True,
        presence="some",
        level=_level,
        description=f"{RETRIEVAL[_name].description} At {_level} level, at the run's k.",
    )(_at_run_k(_name, _level))


def ranking_depth(run: RunResult) -> int | None:
    """How deep each test point's ranking was kept: the deepest cutoff asked (k among them); None where the strategy
    hands over its whole list (full_history), which is the whole ranking."""
    return None if run.cutoff_rule == WHOLE_LIST else max([*run.cutoffs, run.k])


def turn2session_values(run: RunResult) -> list[tuple[float, float, float]] | None:
    """Each test point's turn2session figures at the run's k, over the whole ranking; None where some test point
    with evidence sessions cannot have them from the records kept (the run's figure would be over another population)."""
    depth = ranking_depth(run)
    found = []
    for conversation in run.conversations:
        for point in conversation.test_points:
            if not point.evidence_turns or not point.evidence_sessions:
                continue
            value = turn2session(point, run.k, depth)
            if value is None:
                return None
            found.append(value)
    return found


def _turn2session(index: int, kind: str) -> Callable[[ScoredRun], MetricValue | None]:
    def value(scored: ScoredRun) -> MetricValue | None:
        found = turn2session_values(scored.run) if scored.run is not None else None
        if not found:
            return None  # no sessions, no evidence, or a ranking kept too shallow: absent, never 0
        column = [f[index] for f in found]
        return (
            proportion(round(sum(column)), len(column))
            if kind == PROPORTION
            else MetricValue(fsum(column) / len(column), len(column))
        )

    return value


for _index, (_name, _label, _kind) in enumerate(
    (
        ("turn2session_recall_any", "turn2session recall_any@k", PROPORTION),
        ("turn2session_recall_all", "turn2session recall_all@k", PROPORTION),
        ("turn2session_ndcg_any", "turn2session NDCG@k", MEAN),
    )
):
    metric(
        _name,
        label=_label,
        kind=_kind,
        higher_is_better=True,
        optional=True,
        leaderboard=False,
        description="LongMemEval's evaluate_retrieval_turn2session at the run's k, over the whole ranking: the turn "
        "ranking cut to sessions (an evidence session counts by its evidence turns only, the list widened to k sessions; "
        "NDCG counts every ranked evidence turn). Absent where the corpus has no sessions or evidence, and where some "
        "test point's widening runs past the records kept (the run's deepest cutoff). The session.* figures are taken "
        "over distinct sessions instead.",
    )(_turn2session(_index, _kind))


def _answerable(point: Point) -> bool:
    return point.score.answerable


@point_metric(
    "recall",
    label="keyword hit@k",
    kind=PROPORTION,
    higher_is_better=True,
    description="Share of test points where a retrieved record held an expected keyword (the original harness's recall@k; "
    "keyword matching, not the share of evidence found).",
)
def recall(point: Point) -> float | None:
    return float(point.score.hit) if _answerable(point) else None


@point_metric(
    "strict_recall",
    label="strict recall",
    kind=PROPORTION,
    higher_is_better=True,
    description="Share of test points where the retrieved records held every expected keyword.",
)
def strict_recall(point: Point) -> float | None:
    return float(point.score.strict_hit) if _answerable(point) else None


@point_metric(
    "mrr",
    label="MRR",
    kind=MEAN,
    higher_is_better=True,
    interval=False,
    description="Mean of 1/rank of the first record holding the answer (0 where none does).",
)
def mrr(point: Point) -> float | None:
    if not _answerable(point):
        return None
    return 1 / point.score.rank if point.score.rank else 0.0


@point_metric(
    "evidence_recall_any",
    label="recall_any@k (answerable)",
    kind=PROPORTION,
    higher_is_better=True,
    optional=True,
    presence="some",
    leaderboard=False,  # shown where it is the corpus's headline (evals.judge.headline, evals.views.tables.board_metrics)
    description="Share of answerable test points with evidence turns where at least one evidence turn was among the "
    "first k records: the headline on a corpus with evidence.",
)
def evidence_recall_any(point: Point) -> float | None:
    found = point.score.evidence_any
    return float(found) if _answerable(point) and found is not None else None


@point_metric(
    "evidence_recall_all",
    label="recall_all@k (answerable)",
    kind=PROPORTION,
    higher_is_better=True,
    optional=True,
    presence="some",
    leaderboard=False,
    description="Share of answerable test points with evidence turns where every evidence turn was retrieved.",
)
def evidence_recall_all(point: Point) -> float | None:
    found = point.score.evidence_all
    return float(found) if _answerable(point) and found is not None else None


@point_metric(
    "tokens_per_test_point",
    label="tokens / test point",
    kind=TOKENS,
    higher_is_better=False,
    description="Mean context tokens (cl100k_base) of the records retrieved per test point, over the test points the "
    "headline counts (LoCoMo's: every question with evidence, adversarial ones included); where the rule is not known "
    "(the original harness's JSON), over the answerable test points.",
)
def tokens_per_test_point(point: Point) -> float | None:
    return point.score.context_tokens if _answerable(point) else None
