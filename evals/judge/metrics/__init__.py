"""Metrics as data: each metric is declared once, in its family's module, with the function that computes it.

A declaration says what the metric is called, how it is shown and whether
higher is better; the store keeps every run's values in one long table
(``run_metrics``), and the CLI tables, the Markdown table, the downloads and
the site's columns are made from the declarations. Adding a metric is one
decorated function in one of this package's modules: no migration, no template edit.

::

    @point_metric("hit_at_1", label="hit@1", kind=PROPORTION, higher_is_better=True,
                  description="Share of test points whose first record holds the answer.")
    def hit_at_1(point: Point) -> float | None:
        return float(point.score.rank == 1) if point.score.answerable else None

A function returns ``None`` when the metric does not apply to the run (answer
accuracy without a judge): the run then has no value, shown as "—". A value
whose ``value`` is ``None`` applies but has no data (no test point): "null".

Most metrics are means over test points. Those are declared with
:func:`point_metric`, as the value of one test point: :func:`point_values`
works out every such value of every test point once, retrieval metrics at
every level and cutoff included, and :func:`grouped` aggregates them over the
whole run, each conversation or each category, with their intervals. The
result JSON, the tables and the site read the :class:`MetricValue` s this
gives; none of them scores a test point itself.

The package holds one module per family, imported here in declaration order (the order of the columns):
``_registry`` (what a metric is, the decorators, each point's values and their aggregates, the retrieval
metrics' keys), ``_retrieval``, ``_fair`` (recall at context budgets, retrievals over k, a k reaching every
session), ``_answers``, ``_costs``, ``_repeats`` (the judge asked again), ``_latency``
(and the memory's footprint) and ``_rows`` (the result JSON's blocks). Import every name from here.
"""

# ruff: noqa: I001  (the families are imported in declaration order, which is the order of the columns)
from __future__ import annotations

from evals.judge.metrics._registry import (
    ALL,
    COUNT,
    Kind,
    MEAN,
    METRICS,
    Metric,
    MetricValue,
    PROPORTION,
    Point,
    PointValues,
    Presence,
    RETRIEVAL,
    RetrievalMetric,
    SECONDS,
    ScoredRun,
    TOKENS,
    USD,
    compute_metrics,
    declared,
    declaring,
    grouped,
    metric,
    metric_order,
    over_headline,
    parse_retrieval_key,
    point_metric,
    point_values,
    proportion,
    retrieval_key,
    retrieval_metrics,
)
from evals.judge.metrics._retrieval import (
    HEADLINE,
    evidence_recall_all,
    evidence_recall_any,
    mrr,
    ranking_depth,
    recall,
    strict_recall,
    tokens_per_test_point,
)
from evals.judge.metrics._fair import (
    BUDGETS,
    budget_key,
    k_reaches_all,
    points_returning_all,
    over_every_point,
    retrievals_over_k,
    test_points,
)
from evals.judge.metrics._answers import (
    answer_abstention_accuracy,
    answer_accuracy,
    answer_bleu1,
    answer_correct_abstention,
    answer_f1,
    answer_false_abstention,
    answer_score,
    answer_scores,
    answer_task_averaged,
    answer_unparsed,
    answer_values_by_category,
    keyword_accuracy,
)
from evals.judge.metrics._costs import (
    cost_values,
    llm_tokens_per_test_point,
    tokens_per_correct,
    usd_per_correct,
    usd_spent,
)
from evals.judge.metrics._repeats import repeat_stats
from evals.judge.metrics._latency import (
    LatencyBucket,
    SLOPE_SIZES,
    latency_by_size,
    latency_sizes,
    latency_slope,
    prefetch_s,
)
from evals.judge.metrics._rows import (
    latency_block,
    measured_only,
    retrieval_by_category,
    retrieval_rows,
    turn2session_block,
)

__all__ = [
    "ALL",
    "BUDGETS",
    "COUNT",
    "HEADLINE",
    "Kind",
    "LatencyBucket",
    "MEAN",
    "METRICS",
    "Metric",
    "MetricValue",
    "PROPORTION",
    "Point",
    "PointValues",
    "Presence",
    "RETRIEVAL",
    "RetrievalMetric",
    "SECONDS",
    "SLOPE_SIZES",
    "ScoredRun",
    "TOKENS",
    "USD",
    "answer_abstention_accuracy",
    "answer_accuracy",
    "answer_bleu1",
    "answer_correct_abstention",
    "answer_f1",
    "answer_false_abstention",
    "answer_score",
    "answer_scores",
    "answer_task_averaged",
    "answer_unparsed",
    "answer_values_by_category",
    "budget_key",
    "compute_metrics",
    "cost_values",
    "declared",
    "declaring",
    "evidence_recall_all",
    "evidence_recall_any",
    "grouped",
    "k_reaches_all",
    "points_returning_all",
    "keyword_accuracy",
    "latency_block",
    "latency_by_size",
    "latency_sizes",
    "latency_slope",
    "llm_tokens_per_test_point",
    "measured_only",
    "metric",
    "metric_order",
    "over_headline",
    "mrr",
    "over_every_point",
    "parse_retrieval_key",
    "point_metric",
    "point_values",
    "prefetch_s",
    "proportion",
    "ranking_depth",
    "recall",
    "retrieval_by_category",
    "retrieval_key",
    "repeat_stats",
    "retrieval_metrics",
    "retrieval_rows",
    "retrievals_over_k",
    "strict_recall",
    "test_points",
    "tokens_per_correct",
    "tokens_per_test_point",
    "turn2session_block",
    "usd_per_correct",
    "usd_spent",
]
