"""Metrics as data: each metric is declared once, here, with the function that computes it.

A declaration says what the metric is called, how it is shown and whether
higher is better; the store keeps every run's values in one long table
(``run_metrics``), and the CLI tables, the Markdown table, the downloads and
the site's columns are made from the declarations. Adding a metric is one
decorated function in this module: no migration, no template edit.

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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from evals.judge import answer_metrics as qa
from evals.judge.answer_scores import lexical
from evals.judge.retrieval import LEVELS, POINT_METRICS, evidence_at
from evals.judge.retrieval import point_scores as retrieval_scores
from evals.judge.scoring import PointScore, Scores
from evals.judge.stats import bootstrap_mean_intervals, wilson_interval
from evals.model import costs
from evals.model.formatting import whole_number
from evals.model.results import (
    ANSWER,
    JUDGE,
    MEMORY_WRITE,
    WHOLE_LIST,
    AnswerRun,
    CallTimings,
    PointAnswer,
    RunResult,
    TestPointResult,
    usage_json,
)

__all__ = [
    "ALL",
    "answer_scores",
    "answer_values_by_category",
    "Point",
    "PointValues",
    "grouped",
    "point_metric",
    "point_values",
    "RETRIEVAL",
    "RetrievalMetric",
    "declared",
    "latency_block",
    "measured_only",
    "retrieval_by_category",
    "retrieval_rows",
    "metric_order",
    "parse_retrieval_key",
    "retrieval_key",
    "retrieval_metrics",
    "METRICS",
    "COUNT",
    "HEADLINE",
    "MEAN",
    "LatencyBucket",
    "latency_by_size",
    "latency_sizes",
    "latency_slope",
    "SLOPE_SIZES",
    "PROPORTION",
    "SECONDS",
    "TOKENS",
    "USD",
    "Metric",
    "MetricValue",
    "ScoredRun",
    "compute_metrics",
    "cost_values",
    "metric",
    "proportion",
]

Kind = Literal["proportion", "mean", "tokens", "seconds", "count", "usd"]
PROPORTION: Kind = "proportion"  # successes / n, with a 95% Wilson interval
MEAN: Kind = "mean"  # a mean score in [0, 1] (MRR)
TOKENS: Kind = "tokens"  # a token count (per test point); "~" when the counts are estimates
SECONDS: Kind = "seconds"  # a wall-clock time: measured, not recomputable from the stored records
COUNT: Kind = "count"  # a number of things (records held)
USD: Kind = "usd"  # US dollars at the run's price table (evals.model.costs)


@dataclass(frozen=True)
class MetricValue:
    """One metric of one run: its value (None: no data), how many observations, its 95% interval."""

    value: float | None
    n: int
    low: float | None = None
    high: float | None = None

    @property
    def successes(self) -> int | None:
        """For a proportion, the count it is of (hits of hits / total)."""
        return None if self.value is None else round(self.value * self.n)

    @property
    def total(self) -> int:
        """For a mean of whole numbers (tokens), the sum it is of; 0 without data."""
        return 0 if self.value is None else round(self.value * self.n)


@dataclass(frozen=True)
class ScoredRun:
    """What a metric function may read: the play-through, its scores and its answers."""

    run: RunResult
    scores: Scores
    answers: AnswerRun | None = None


@dataclass(frozen=True)
class Metric:
    name: str  # the key in run_metrics, JSON and CSV
    label: str  # the column heading
    kind: Kind
    higher_is_better: bool
    description: str  # one sentence, for the methodology page and the docs
    compute: Callable[[ScoredRun], MetricValue | None]
    level: str | None = None  # e.g. "turn" or "session", for metrics that have levels
    cutoff: int | None = None  # the k it is measured at, for metrics at several cutoffs
    answers: bool = False  # needs end-to-end answers
    # Shown only in tables where some run has a value (answers; evidence, which needs labelled turns).
    optional: bool = False
    leaderboard: bool = True  # a column of the leaderboard tables (False: on the run page and in downloads only)
    # A mean over test points (point_metric): the value of one test point, None where it does not count.
    per_point: Callable[[Point], float | None] | None = None


METRICS: dict[str, Metric] = {}


def metric(
    name: str,
    *,
    label: str,
    kind: Kind,
    higher_is_better: bool,
    description: str,
    level: str | None = None,
    cutoff: int | None = None,
    answers: bool = False,
    optional: bool = False,
    leaderboard: bool = True,
) -> Callable[[Callable[[ScoredRun], MetricValue | None]], Callable[[ScoredRun], MetricValue | None]]:
    """Declare the decorated function as the metric ``name`` (in declaration order: column order)."""

    def register(compute: Callable[[ScoredRun], MetricValue | None]) -> Callable[[ScoredRun], MetricValue | None]:
        _declare(Metric(name, label, kind, higher_is_better, description, compute, level, cutoff, answers, optional or answers, leaderboard))
        return compute

    return register


def _declare(declared: Metric) -> None:
    if declared.name in METRICS:
        raise ValueError(f"metric {declared.name!r} is declared twice")
    METRICS[declared.name] = declared


def proportion(successes: int, n: int) -> MetricValue:
    interval = wilson_interval(successes, n)
    return MetricValue(
        successes / n if n else None, n, interval[0] if interval else None, interval[1] if interval else None
    )


# -- each test point's values, computed once, and their aggregates ------------------------------


@dataclass(frozen=True)
class Point:
    """What a per-point metric reads of one test point: its result, its score, its answer (with answers),
    its retrieval scores ((level, cutoff) -> one per metric of :data:`RETRIEVAL`, at every cutoff and at k;
    :meth:`retrieval_value` reads one) and the run's k."""

    result: TestPointResult
    score: PointScore
    answer: PointAnswer | None
    retrieval: dict[tuple[str, int], tuple[float, ...]]
    k: int
    protocol: str = "harness"  # the answers' protocol (evals.benchmarks.protocols): which lexical scores apply

    def retrieval_value(self, name: str, level: str, cutoff: int) -> float | None:
        found = self.retrieval.get((level, cutoff))
        return None if found is None else found[_RETRIEVAL_INDEX[name]]


ALL = "all"  # the one group of ``grouped(values)``: the whole run
# Present in a group: always (null without data), only with some value, or where some test point has
# evidence at a level (a retrieval metric whose rankings were not kept is then null).
Presence = str


@dataclass(frozen=True)
class _Column:
    kind: Kind
    presence: Presence  # "always", "some", or a level
    interval: bool = True  # a MEAN with a bootstrap interval


@dataclass(frozen=True)
class PointValues:
    """Every test point's value of every per-point metric, in run order, computed once (:func:`point_values`).

    ``columns[name][i]`` is test point i's value (None: it does not count for
    ``name``); :func:`grouped` aggregates them."""

    conversations: list[int]  # per test point, the position of its conversation
    conversation_count: int
    categories: list[str | None]  # per test point, its category
    labelled: dict[str, list[bool]]  # per level, per test point: has evidence there
    columns: dict[str, list[float | None]] = field(default_factory=dict)
    specs: dict[str, _Column] = field(default_factory=dict)


def point_metric(
    name: str,
    *,
    label: str,
    kind: Kind,
    higher_is_better: bool,
    description: str,
    presence: Presence = "always",
    interval: bool = True,
    level: str | None = None,
    answers: bool = False,
    optional: bool = False,
    leaderboard: bool = True,
    whole_run: Callable[[ScoredRun], MetricValue | None] | None = None,
) -> Callable[[Callable[[Point], float | None]], Callable[[ScoredRun], MetricValue | None]]:
    """Declare the decorated function, the value of one test point (None: it does not count), as the
    metric ``name``: its mean over the counted test points, a proportion with a Wilson interval, a
    MEAN with a bootstrap one (unless ``interval=False``). Returns the run-level function: ``whole_run``
    where given (the same figure, for a caller with answers but no scores), else the aggregate."""

    def register(per_point: Callable[[Point], float | None]) -> Callable[[ScoredRun], MetricValue | None]:
        def compute(run: ScoredRun) -> MetricValue | None:
            if answers and run.answers is None:
                return None  # the metric does not apply
            if whole_run is not None:
                return whole_run(run)
            return grouped(point_values(run, [name]))[ALL].get(name)

        _declare(
            Metric(name, label, kind, higher_is_better, description, compute, level, None, answers, optional or answers, leaderboard, per_point)
        )
        _POINT_SPECS[name] = _Column(kind, presence, interval)
        return compute

    return register


_POINT_SPECS: dict[str, _Column] = {}
_UNANSWERABLE_TOKENS = "unanswerable_tokens"  # context tokens of the unanswerable test points, reported apart


def point_values(run: ScoredRun, names: Iterable[str] | None = None) -> PointValues:
    """Every per-point value of ``run`` (or only of the metrics ``names``): the declared per-point metrics,
    the retrieval metrics at every level and cutoff, the context tokens at every cutoff and of unanswerable
    test points. ``run.scores`` may be None (then only the retrieval metrics), and so may ``run.run`` (then
    only what the scores hold: the original harness's numbers)."""
    wanted = None if names is None else set(names)
    result, scores, answers = run.run, run.scores, run.answers
    points = [m for m in METRICS.values() if m.per_point is not None and (wanted is None or m.name in wanted)]
    points = [m for m in points if scores is not None and (answers is not None or not m.answers)]
    cutoffs = list(result.cutoffs) if result is not None else []
    retrieval_keys = [
        (retrieval_key(name, level, cutoff), (name, level, cutoff)) for level in LEVELS for cutoff in cutoffs for name in RETRIEVAL
    ]
    retrieval_keys = [(key, found) for key, found in retrieval_keys if wanted is None or key in wanted]
    token_keys = [(f"{_TOKENS_AT}{c}", c) for c in cutoffs if scores is not None and (wanted is None or f"{_TOKENS_AT}{c}" in wanted)]
    count = len(result.conversations) if result is not None else len(scores.points)
    values = PointValues([], count, [], {level: [] for level in LEVELS})
    columns = values.columns
    for m in points:
        columns[m.name] = []
        values.specs[m.name] = _POINT_SPECS[m.name]
    for key, (name, level, _) in retrieval_keys:
        columns[key] = []
        values.specs[key] = _Column(RETRIEVAL[name].kind, level)
    for key, _ in token_keys:
        columns[key] = []
        values.specs[key] = _Column(TOKENS, "always")
    if scores is not None and (wanted is None or _UNANSWERABLE_TOKENS in wanted):
        columns[_UNANSWERABLE_TOKENS] = []
        values.specs[_UNANSWERABLE_TOKENS] = _Column(TOKENS, "some")
    depths = sorted({*cutoffs, result.k}) if cutoffs else []
    if not retrieval_keys and not any(parse_retrieval_key(m.name) for m in points):
        depths = []  # nothing asked for reads a ranking
    whole = result is not None and result.cutoff_rule == WHOLE_LIST
    protocol = answers.protocol if answers is not None else "harness"
    scored_points: list[dict[tuple[str, int], tuple[float, ...]]] = []
    for position in range(count):
        here = result.conversations[position].test_points if result is not None else [None] * len(scores.points[position])
        scored = scores.points[position] if scores is not None else [None] * len(here)
        given = answers.points[position] if answers is not None else [None] * len(here)
        for point, score, answer in zip(here, scored, given, strict=True):
            values.conversations.append(position)
            values.categories.append(point.category if point is not None else None)
            for level in LEVELS:
                values.labelled[level].append(point is not None and bool(evidence_at(point, level)))
            retrieval = retrieval_scores(point, depths, result.cutoff_rule) if depths else {}
            scored_points.append(retrieval)
            view = Point(point, score, answer, retrieval, result.k if result is not None else 0, protocol)  # type: ignore[arg-type]
            for m in points:
                columns[m.name].append(m.per_point(view))
            answerable = score is not None and score.answerable
            for key, cutoff in token_keys:
                columns[key].append((score.context_tokens if whole else (point.cutoff_tokens or {}).get(cutoff)) if answerable else None)
            if _UNANSWERABLE_TOKENS in columns:
                columns[_UNANSWERABLE_TOKENS].append(None if answerable else score.context_tokens)
    for key, (name, level, cutoff) in retrieval_keys:
        at, index = (level, cutoff), _RETRIEVAL_INDEX[name]
        columns[key] = [None if (at_cutoff := scores_at.get(at)) is None else at_cutoff[index] for scores_at in scored_points]
    # Each cutoff's tokens are known for every answerable test point or for none (a run read back from the store).
    if token_keys:
        flags = [s.answerable for conversation in scores.points for s in conversation]
        for key, _ in token_keys:
            if any(v is None for v, counted in zip(columns[key], flags, strict=True) if counted):
                del columns[key], values.specs[key]
    return values


def grouped(
    values: PointValues, by: str | None = None, names: Iterable[str] | None = None, *, intervals: bool = True
) -> dict[Hashable, dict[str, MetricValue]]:
    """Each metric of ``values`` (or of ``names``) aggregated over the test points of each group: the whole
    run (``by`` None: one group, :data:`ALL`), each conversation (``"conversation"``: keyed by position,
    every conversation, in run order) or each category (``"category"``: keyed by name, None for test points
    without one, in order of first appearance). A metric is left out of a group where it does not apply.
    ``intervals=False`` leaves means without their bootstrap interval (the costly part), for a caller that
    reads none of them; every value is the same."""
    if by is None:
        members: dict[Hashable, list[int]] = {ALL: list(range(len(values.conversations)))}
    elif by == "conversation":
        members = {position: [] for position in range(values.conversation_count)}
        for index, position in enumerate(values.conversations):
            members[position].append(index)
    elif by == "category":
        members = {}
        for index, category in enumerate(values.categories):
            members.setdefault(category, []).append(index)
    else:
        raise ValueError(f"cannot group by {by!r}")
    wanted = list(values.columns) if names is None else [n for n in names if n in values.columns]
    out: dict[Hashable, dict[str, MetricValue]] = {group: {} for group in members}
    pending: list[tuple[Hashable, str, list[float]]] = []  # means whose bootstrap intervals are drawn together
    for name in wanted:
        column, spec = values.columns[name], values.specs[name]
        for group, indices in members.items():
            counted = [v for i in indices if (v := column[i]) is not None]
            if spec.presence == "some" and not counted:
                continue
            if spec.presence in LEVELS and not any(values.labelled[spec.presence][i] for i in indices):
                continue
            if spec.kind == PROPORTION:
                out[group][name] = proportion(round(sum(counted)), len(counted))
            elif spec.kind == MEAN and spec.interval:
                out[group][name] = MetricValue(math.fsum(counted) / len(counted) if counted else None, len(counted))
                if intervals:
                    pending.append((group, name, counted))
            else:
                out[group][name] = MetricValue(sum(counted) / len(counted) if counted else None, len(counted))
    drawn = bootstrap_mean_intervals([counted for _, _, counted in pending]) if pending else []
    for (group, name, _), interval in zip(pending, drawn, strict=True):
        if interval is not None:
            out[group][name] = MetricValue(out[group][name].value, out[group][name].n, *interval)
    return out


def compute_metrics(run: ScoredRun) -> dict[str, MetricValue]:
    """Every declared metric that applies to ``run``, in declaration order, then the retrieval
    metrics at every cutoff (:data:`RETRIEVAL`) and the context tokens at every cutoff: each test
    point's values worked out once (:func:`point_values`)."""
    whole = grouped(point_values(run))[ALL]
    values = {}
    for declared in METRICS.values():
        value = whole.get(declared.name) if declared.per_point is not None else declared.compute(run)
        if value is not None:
            values[declared.name] = value
    values.update((name, value) for name, value in whole.items() if name not in METRICS and name != _UNANSWERABLE_TOKENS)
    return values


_TOKENS_AT = "tokens_per_test_point@"


# -- the field's retrieval metrics, at every cutoff and level -----------------------------------


@dataclass(frozen=True)
class RetrievalMetric:
    """A metric measured at every cutoff and level (:mod:`evals.judge.retrieval` scores one test point)."""

    name: str
    kind: Kind  # PROPORTION (0/1 per test point: a Wilson interval) or MEAN (a bootstrap interval)
    description: str


RETRIEVAL: dict[str, RetrievalMetric] = {
    m.name: m
    for m in (
        RetrievalMetric("recall_any", PROPORTION, "Share of test points with evidence where some evidence item is among the top k (trec_eval's success@k)."),
        RetrievalMetric("recall_all", PROPORTION, "Share of test points with evidence where every evidence item is among the top k."),
        RetrievalMetric("recall_frac", MEAN, "Mean fraction of a test point's evidence items among the top k (trec_eval's recall@k; LoCoMo's retrieval recall)."),
        RetrievalMetric("ndcg_any", MEAN, "Mean NDCG@k with binary relevance, rank r discounted by 1/log2(r + 1) (trec_eval's ndcg_cut)."),
        RetrievalMetric(
            "ndcg_any_lme",
            MEAN,
            "Mean NDCG@k with binary relevance as LongMemEval computes it: ranks 1 and 2 count fully, rank r >= 2 is discounted by 1/log2(r).",
        ),
    )
}
assert list(RETRIEVAL) == list(POINT_METRICS)  # one declaration per scoring function of evals.judge.retrieval
_RETRIEVAL_INDEX = {name: index for index, name in enumerate(RETRIEVAL)}  # its place in point_scores' tuples
_RETRIEVAL_KEY = re.compile(r"(?:(turn|session)\.)?([a-z_]+)@([0-9]+|k)")


def retrieval_key(name: str, level: str, cutoff: int | str) -> str:
    """The key of a retrieval metric at one level and cutoff: ``turn.recall_any@10``; ``@k`` is the run's k."""
    return f"{level}.{name}@{cutoff}"


def parse_retrieval_key(key: str) -> tuple[str, str, int | None] | None:
    """(name, level, cutoff) of ``[LEVEL.]NAME@K`` (level turn by default; cutoff None for ``@k``), else None."""
    found = _RETRIEVAL_KEY.fullmatch(key)
    if found is None or found.group(2) not in RETRIEVAL:
        return None
    level, name, cutoff = found.group(1) or "turn", found.group(2), found.group(3)
    if cutoff == "k":
        return name, level, None
    number = whole_number(cutoff)  # None past 18 digits
    return None if number is None else (name, level, number)


def declared(key: str) -> Metric | None:
    """The declaration of metric ``key``: a declared metric, or a retrieval metric at a level and cutoff."""
    if key in METRICS:
        return METRICS[key]
    cutoff = whole_number(key[len(_TOKENS_AT):]) if key.startswith(_TOKENS_AT) else None
    if cutoff is not None:
        return Metric(key, f"tokens / test point @{cutoff}", TOKENS, False,
                      f"Mean context tokens (cl100k_base) of the first {cutoff} records per test point.",
                      lambda run: None, None, cutoff, optional=True, leaderboard=False)
    parsed = parse_retrieval_key(key)
    if parsed is None:
        return None
    name, level, cutoff = parsed
    family = RETRIEVAL[name]
    at = "k" if cutoff is None else cutoff
    return Metric(
        retrieval_key(name, level, at),
        f"{name}@{at} ({level})",
        family.kind,
        True,
        f"{family.description} At {level} level, k = {at}.",
        lambda run: None,  # values come from retrieval_metrics, all cutoffs at once
        level,
        cutoff,
        optional=True,
        leaderboard=False,
    )


def metric_order(key: str) -> tuple:
    """Where metric ``key`` sorts: declared metrics in declaration order, then the retrieval metrics by
    level, metric and cutoff (numerically), then anything no longer declared, by name."""
    if key in METRICS:
        return (0, list(METRICS).index(key))
    cutoff = whole_number(key[len(_TOKENS_AT):]) if key.startswith(_TOKENS_AT) else None
    if cutoff is not None:
        return (1, len(LEVELS), 0, cutoff)
    parsed = parse_retrieval_key(key)
    if parsed is not None:
        name, level, cutoff = parsed
        return (1, LEVELS.index(level), list(RETRIEVAL).index(name), cutoff or 0)
    return (2, key)


def retrieval_metrics(run: RunResult) -> dict[str, MetricValue]:
    """Every retrieval metric of ``run`` at each level and cutoff: empty for a run measured without
    cutoffs (the original CLI) or whose test points list no evidence."""
    return grouped(point_values(ScoredRun(run, None), _retrieval_names(run)))[ALL]  # type: ignore[arg-type]


def _retrieval_names(run: RunResult) -> list[str]:
    return [retrieval_key(name, level, cutoff) for level in LEVELS for cutoff in run.cutoffs for name in RETRIEVAL]


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
    "first k records: the headline on a corpus with evidence (LongMemEval's population).",
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
    description="Mean context tokens (cl100k_base) of the records retrieved per test point.",
)
def tokens_per_test_point(point: Point) -> float | None:
    return point.score.context_tokens if _answerable(point) else None


# -- end-to-end answers ------------------------------------------------------------------------


# Each protocol's population and value of a point (evals.judge.answer_metrics): a verdict (0/1, a Wilson interval)
# or, where the protocol scores without a judge (LoCoMo), its own score (a mean, a bootstrap interval).


def _judged_accuracy(run: ScoredRun) -> MetricValue | None:
    """answer_accuracy from the answers alone: None for a run no judge graded, null without a counted point."""
    answers = run.answers
    if answers is None:
        return None
    values = [v for conversation in answers.points for answer in conversation if (v := qa.judged_value(answer)) is not None]
    if not values and answers.judge_model is None:
        return None  # a run without a judge (or a protocol that scores without one)
    return proportion(round(sum(values)), len(values))


@point_metric(
    "answer_accuracy",
    label="answer accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    whole_run=_judged_accuracy,
    description="Share of the test points the protocol counts that its judge graded correct (an unparsed verdict counts "
    "as not correct); per category with the same rule.",
)
def answer_accuracy(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.judged_value(answer)


@point_metric(
    "answer_score",
    label="QA score",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    presence="some",
    description="Mean of the protocol's own per-point score where it scores without a judge (LoCoMo: Porter-stemmed F1 "
    "with its per-category rules, category 5 by its 'not mentioned' rule), 95% bootstrap interval.",
)
def answer_score(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.scored_value(answer)


def answer_values_by_category(values: PointValues) -> dict[str | None, list[float]] | None:
    """Each category's counted answer values (verdicts or scores), in order of first appearance; None when
    no test point has a category or the values hold no answers."""
    if not any(c is not None for c in values.categories) or "answer_accuracy" not in values.columns:
        return None
    out: dict[str | None, list[float]] = {}
    for category, judged, scored in zip(values.categories, values.columns["answer_accuracy"], values.columns["answer_score"], strict=True):
        value = judged if judged is not None else scored
        if value is not None:
            out.setdefault(category, []).append(value)
    return out


def _values_by_category(run: ScoredRun) -> dict[str | None, list[float]] | None:
    return answer_values_by_category(point_values(run, ["answer_accuracy", "answer_score"]))


@metric(
    "answer_task_averaged",
    label="task-averaged",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean of the per-category answer accuracies (scores), each category weighing the same, as LongMemEval "
    "averages its question types; 95% stratified bootstrap interval (seed 0).",
)
def answer_task_averaged(run: ScoredRun) -> MetricValue | None:
    if run.answers is None or run.scores is None:
        return None
    groups = _values_by_category(run)
    found = qa.task_averaged(groups) if groups else None
    return None if found is None else MetricValue(*found)


@point_metric(
    "answer_abstention_accuracy",
    label="abstention accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Accuracy over the counted test points the corpus marks unanswerable (LongMemEval's _abs questions "
    "by its abstention template, LoCoMo's category 5 by its rule).",
)
def answer_abstention_accuracy(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None or answer.answerable else qa.point_value(answer)


@point_metric(
    "answer_false_abstention",
    label="false abstention",
    kind=PROPORTION,
    higher_is_better=False,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of answerable test points whose answer declines to answer (the lexical abstention rule).",
)
def answer_false_abstention(point: Point) -> float | None:
    answer = point.answer
    if answer is None or not answer.answerable:
        return None
    found = qa.abstains(answer)
    return None if found is None else float(found)


@point_metric(
    "answer_correct_abstention",
    label="correct abstention",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of unanswerable test points whose answer declines to answer (the protocol's abstention verdict "
    "or rule where it has one, else the lexical rule).",
)
def answer_correct_abstention(point: Point) -> float | None:
    answer = point.answer
    if answer is None or answer.answerable:
        return None
    found = qa.abstains(answer)
    return None if found is None else float(found)


@point_metric(
    "answer_unparsed",
    label="unparsed verdicts",
    kind=PROPORTION,
    higher_is_better=False,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of the counted verdicts the judge's reply could not be parsed into (counted as not correct); "
    "a run above 1% is flagged.",
)
def answer_unparsed(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.unparsed_value(answer)


def _by_evidence(found: bool) -> Callable[[Point], float | None]:
    def value(point: Point) -> float | None:
        answer = point.answer
        if answer is None or point.score.evidence_any is not found:
            return None
        return qa.point_value(answer)

    return value


for _found, _name, _label, _said in (
    (True, "answer_accuracy_evidence_found", "accuracy, evidence retrieved", "at least one of its evidence turns was retrieved"),
    (False, "answer_accuracy_evidence_missed", "accuracy, evidence missed", "no evidence turn was retrieved (a high "
     "figure here flags guessing or a lenient judge)"),
):  # fmt: skip
    point_metric(
        _name,
        label=_label,
        kind=MEAN,
        higher_is_better=True,
        answers=True,
        presence="some",
        leaderboard=False,
        description=f"Answer accuracy (score) over the counted test points with evidence turns where {_said}; "
        "95% bootstrap interval.",
    )(_by_evidence(_found))


@metric(
    "keyword_accuracy",
    label="keyword accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    description="Share of answers holding an expected keyword.",
)
def keyword_accuracy(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    return None if answers is None else proportion(answers.keyword_hits, answers.total)


def answer_scores(point: TestPointResult, answer: PointAnswer, protocol: str = "harness") -> dict[str, float]:
    """An answer's lexical scores against the expected fact, ``{"f1", "bleu1"}``, as ``protocol`` defines them
    (:data:`evals.judge.answer_scores.LEXICAL`): the per-point values of answer_f1 and answer_bleu1, and what the
    result JSON and the drill-down show beside each answer."""
    return lexical(protocol, answer.answer, point.expected_fact, answer.category if answer.category is not None else point.category)


def _lexical_population(answer: PointAnswer | None) -> bool:
    """Answerable points the protocol does not leave out: an F1 against an unanswerable point's gold means nothing."""
    return answer is not None and answer.answerable and answer.counted is not False


@point_metric(
    "answer_f1",
    label="answer F1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean token F1 of each answer against the expected fact, as the run's protocol defines it (harness and "
    "LongMemEval: LoCoMo's normalisation, no stemming; LoCoMo: stemmed, per-category rules; mem0: token sets); "
    "95% bootstrap interval.",
)
def answer_f1(point: Point) -> float | None:
    answer = point.answer
    return answer_scores(point.result, answer, point.protocol)["f1"] if _lexical_population(answer) else None  # type: ignore[arg-type]


@point_metric(
    "answer_bleu1",
    label="BLEU-1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean sentence BLEU-1 of each answer against the expected fact, as the run's protocol defines it (mem0: "
    "NLTK word tokens, smoothing method1; otherwise the harness's, on LoCoMo's normalised tokens); 95% bootstrap interval.",
)
def answer_bleu1(point: Point) -> float | None:
    answer = point.answer
    return answer_scores(point.result, answer, point.protocol)["bleu1"] if _lexical_population(answer) else None  # type: ignore[arg-type]


@metric(
    "llm_tokens_per_test_point",
    label="LLM tokens / test point",
    kind=TOKENS,
    higher_is_better=False,
    answers=True,
    leaderboard=False,
    description="Prompt and completion tokens of every LLM request the run used (answers, verdicts, summaries; sent or "
    "from the cache) over the answerable test points: kept for runs stored before the costs were split; "
    "the answer, judge and memory-write figures below say the same apart, each over its own denominator.",
)
def llm_tokens_per_test_point(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    if answers is None:
        return None
    total = run.scores.total
    spent = answers.prompt_tokens + answers.completion_tokens
    return MetricValue(spent / total if total else None, total)


# -- what the answers cost (evals.model.costs), from the run's tallies per kind of request ---------------------


def _usage(run: ScoredRun) -> dict[str, Any] | None:
    """The run's usage as stored (kind -> tally), or None: no answers, or made before it was tallied."""
    answers = run.answers
    return usage_json(answers.usage) if answers is not None and answers.usage else None


def _per(kind: str) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        usage = _usage(run)
        tally = usage.get(kind) if usage is not None else None
        if tally is None:
            return None
        tokens = tally["prompt_tokens"] + tally["completion_tokens"] + tally["cached_prompt_tokens"] + tally["cached_completion_tokens"]
        return MetricValue(tokens / tally["per"] if tally["per"] else None, tally["per"])

    return compute


for _kind, _label, _per_what in (
    (ANSWER, "answer tokens / answer", "test point answered (unanswerable ones too: each is answered)"),
    (JUDGE, "judge tokens / verdict", "test point judged (every repeat of its verdict counted)"),
    (MEMORY_WRITE, "memory-write tokens / conversation", "conversation (summary_buffer's summary requests)"),
):
    metric(
        f"{_kind}_tokens_per_{'conversation' if _kind == MEMORY_WRITE else 'point'}",
        label=_label,
        kind=TOKENS,
        higher_is_better=False,
        answers=True,
        leaderboard=False,
        description=f"Prompt and completion tokens of the {_kind.replace('_', '-')} requests, sent or served from the "
        f"cache, per {_per_what}.",
    )(_per(_kind))


@metric(
    "tokens_per_correct",
    label="tokens / correct",
    kind=TOKENS,
    higher_is_better=False,
    answers=True,
    description="Prompt and completion tokens of the answer and memory-write requests (sent or from the cache) per "
    "answer the judge graded correct; the judge's own tokens are the evaluation's cost and left out.",
)
def tokens_per_correct(run: ScoredRun) -> MetricValue | None:
    usage = _usage(run)
    if usage is None or run.answers is None or run.answers.judge_model is None:
        return None
    return MetricValue(costs.tokens_per_correct(usage, run.answers.correct), run.answers.correct)


@metric(
    "usd_per_correct",
    label="$ / correct",
    kind=USD,
    higher_is_better=False,
    answers=True,
    description="Dollars of the answer and memory-write requests at list price (sent or from the cache) per answer "
    "the judge graded correct, at the run's price table; — where a model has no price.",
)
def usd_per_correct(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    return cost_values(_usage(run), answers.correct if answers is not None and answers.judge_model else None)["usd_per_correct"]


@metric(
    "usd_spent",
    label="$ spent",
    kind=USD,
    higher_is_better=False,
    answers=True,
    description="Dollars of every LLM request this run sent (answers, verdicts, summaries) at the run's price table; "
    "replies served from the cache cost nothing, so a rerun from the cache spent $0; — where a model has no price.",
)
def usd_spent(run: ScoredRun) -> MetricValue | None:
    return cost_values(_usage(run), None)["usd_spent"]


def cost_values(usage: dict[str, Any] | None, correct: int | None) -> dict[str, MetricValue | None]:
    """The dollar metrics of a run's usage at the prices it holds: what the metrics store, and what a table
    repriced at another price table (evals leaderboard --prices) shows. None where a model has no price, or
    (per correct answer) the run has no judge (``correct`` None)."""
    if usage is None:
        return {"usd_spent": None, "usd_per_correct": None}
    spent = costs.usd_spent(usage)
    per_correct = None
    if correct is not None:
        value = costs.usd_per_correct(usage, correct)
        per_correct = None if value is None and correct and costs.unpriced(usage) else MetricValue(value, correct)
    return {
        "usd_spent": None if spent is None else MetricValue(spent, sum(t["sent"] for t in usage.values())),
        "usd_per_correct": per_correct,
    }


def _repeats(which: str) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        accuracies = run.answers.repeat_accuracies() if run.answers is not None else None
        if accuracies is None:
            return None
        mean = sum(accuracies) / len(accuracies)
        if which == "mean":
            return MetricValue(mean, len(accuracies))
        return MetricValue(math.sqrt(sum((a - mean) ** 2 for a in accuracies) / (len(accuracies) - 1)), len(accuracies))

    return compute


metric(
    "judge_repeat_accuracy_mean",
    label="accuracy, mean over judge repeats",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    leaderboard=False,
    description="With --judge-repeats N: the mean over the N repeats of each repeat's answer accuracy (n: repeats).",
)(_repeats("mean"))
metric(
    "judge_repeat_accuracy_sd",
    label="accuracy, sd over judge repeats",
    kind=MEAN,
    higher_is_better=False,
    answers=True,
    leaderboard=False,
    description="With --judge-repeats N: the sample standard deviation over the N repeats of each repeat's answer "
    "accuracy: how much the judge's verdicts vary when asked again (n: repeats).",
)(_repeats("sd"))


# -- latency of the strategy under test --------------------------------------------------------


def _percentile(values: list[int], q: float) -> float:
    """The q-th percentile (nearest rank on the sorted values: a time some call really took), in seconds."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1] / 1e9


def _latency(calls: str, q: float) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        timings = run.run.timings
        if timings is None:
            return None  # read back or imported: the stored value stands
        values = getattr(timings, calls)
        return MetricValue(_percentile(values, q) if values else None, len(values))

    return compute


for _calls, _label in (("retrieve_ns", "retrieve"), ("add_ns", "add")):
    for _q in (50, 95, 99):
        metric(
            f"{_label}_latency_p{_q}_s",
            label=f"{_label} p{_q}",
            kind=SECONDS,
            higher_is_better=False,
            optional=True,
            leaderboard=(_label, _q) == ("retrieve", 95),
            description=f"{_q}th percentile of the wall-clock time of one {_label} call into the strategy.",
        )(_latency(_calls, _q))


@dataclass(frozen=True)
class LatencyBucket:
    """Retrieve calls made while the memory held from ``held_low`` to ``held_high`` records."""

    held_low: int
    held_high: int
    n: int
    p50_s: float
    p95_s: float
    mean_s: float


def latency_by_size(timings: CallTimings) -> list[LatencyBucket]:
    """Retrieve latency bucketed by the records held at each call, in powers of two (0, 1, 2-3, 4-7, ...).

    On log-log axes an O(n) search is a line of slope 1 through these buckets; a flat line is an index."""
    buckets: dict[int, list[int]] = {}
    for held, ns in zip(timings.retrieve_held, timings.retrieve_ns, strict=False):
        buckets.setdefault(held.bit_length(), []).append(ns)
    out = []
    for bits, values in sorted(buckets.items()):
        low, high = (0, 0) if bits == 0 else (1 << (bits - 1), (1 << bits) - 1)
        out.append(LatencyBucket(low, high, len(values), _percentile(values, 50), _percentile(values, 95), sum(values) / len(values) / 1e9))
    return out


SLOPE_SIZES = 3  # memory sizes (buckets of records held) a latency slope needs: two points always make a line


def latency_sizes(buckets: list[LatencyBucket]) -> int:
    """How many distinct memory sizes (buckets of non-empty memory with a latency) the run retrieved at."""
    return len({(b.held_low, b.held_high) for b in buckets if b.held_low > 0 and b.p50_s > 0})


def latency_slope(buckets: list[LatencyBucket]) -> float | None:
    """The least-squares slope of log p50 against log records held (the buckets' geometric middles),
    weighted by calls; None with fewer than :data:`SLOPE_SIZES` buckets of non-empty memory.

    A line through two sizes is exact whatever the latency does (on LoCoMo every question comes after the
    whole history, so each conversation is one size, and ten conversations make two buckets): it would
    print a slope the data cannot support."""
    points = [(math.log((b.held_low * b.held_high) ** 0.5), math.log(b.p50_s), b.n) for b in buckets if b.held_low > 0 and b.p50_s > 0]
    if latency_sizes(buckets) < SLOPE_SIZES:
        return None
    weight = sum(w for _, _, w in points)
    mx = sum(x * w for x, _, w in points) / weight
    my = sum(y * w for _, y, w in points) / weight
    return sum(w * (x - mx) * (y - my) for x, y, w in points) / sum(w * (x - mx) ** 2 for x, _, w in points)


@metric(
    "prefetch_s",
    label="prefetch",
    kind=SECONDS,
    higher_is_better=False,
    optional=True,
    leaderboard=False,
    description="Wall-clock time of embedding every text up front (Prefetching strategies), kept apart from the per-call latencies.",
)
def prefetch_s(run: ScoredRun) -> MetricValue | None:
    timings = run.run.timings
    if timings is None or timings.prefetch_ns is None:
        return None
    return MetricValue(timings.prefetch_ns / 1e9, 1)


# -- what the memory holds at the end of each conversation --------------------------------------


def _held(attribute: str, aggregate: Callable[[list[int]], float]) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        if run.run.timings is None:
            return None  # read back or imported: the stored value stands
        values = [getattr(c, attribute) for c in run.run.conversations]
        if not values or any(v is None for v in values):
            return None  # the strategy does not say what it holds (evals.strategies.Footprint)
        return MetricValue(aggregate(values), len(values))

    return compute


for _attribute, _what, _kind in (("held_records", "records", COUNT), ("held_tokens", "tokens", TOKENS)):
    for _aggregate, _fn, _said in (("mean", lambda v: sum(v) / len(v), "Mean over conversations of the"), ("max", max, "Largest")):
        metric(
            f"{_what}_held_{_aggregate}",
            label=f"{_what} held ({_aggregate})",
            kind=_kind,
            higher_is_better=False,
            optional=True,
            leaderboard=False,
            description=f"{_said} {_what} the memory held when a conversation ended (its footprint).",
        )(_held(_attribute, _fn))


# -- the result JSON's blocks of these metrics --------------------------------------------------


def retrieval_rows(values: dict[str, MetricValue]) -> list[dict[str, Any]]:
    """``metrics.retrieval`` of the result JSON: one object per level, metric and cutoff, in that order."""
    rows = []
    for key in sorted(values, key=metric_order):
        parsed = parse_retrieval_key(key)
        if parsed is None or parsed[2] is None:
            continue
        name, level, cutoff = parsed
        value = values[key]
        rows.append({"level": level, "metric": name, "k": cutoff, "value": value.value, "n": value.n, "low": value.low, "high": value.high})
    return rows


def retrieval_by_category(values: PointValues) -> dict[str, list[dict[str, Any]]]:
    """``metrics.retrieval_by_category``: the same rows over each category's test points (those with one)."""
    names = [name for name in values.columns if (parsed := parse_retrieval_key(name)) is not None and parsed[2] is not None]
    groups = grouped(values, "category", names)
    out = {category: retrieval_rows(found) for category, found in sorted((c, v) for c, v in groups.items() if c is not None)}
    return {category: rows for category, rows in out.items() if rows}


def latency_block(values: dict[str, MetricValue]) -> dict[str, Any] | None:
    """``metrics.latency``: per call kind, p50/p95/p99 in milliseconds and the number of calls; then what the
    memory held at the end of a conversation. None for a run without timings."""
    block: dict[str, Any] = {}
    for call in ("add", "retrieve"):
        found = {q: values.get(f"{call}_latency_p{q}_s") for q in (50, 95, 99)}
        if all(v is None for v in found.values()):
            continue
        block[call] = {f"p{q}_ms": None if v is None or v.value is None else v.value * 1000 for q, v in found.items()}
        block[call]["n"] = next(v.n for v in found.values() if v is not None)
    held = {name: values[name] for name in ("records_held_mean", "records_held_max", "tokens_held_mean", "tokens_held_max") if name in values}
    if held:
        block["held_at_end_of_conversation"] = {name.replace("_held", ""): v.value for name, v in held.items()} | {
            "conversations": next(iter(held.values())).n
        }
    return block or None


def measured_only(key: str) -> bool:
    """A metric no one can recompute from a run's records: wall-clock times, the footprint, each cutoff's
    tokens (the store keeps records only down to k as text). Exports carry these values as measured."""
    found = declared(key)
    return found is not None and (found.kind in (SECONDS, COUNT) or key.startswith(("tokens_held_", _TOKENS_AT)))
