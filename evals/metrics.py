"""Metrics as data: each metric is declared once, here, with the function that computes it.

A declaration says what the metric is called, how it is shown and whether
higher is better; the store keeps every run's values in one long table
(``run_metrics``), and the CLI tables, the Markdown table, the downloads and
the site's columns are made from the declarations. Adding a metric is one
decorated function in this module: no migration, no template edit.

::

    @metric("hit_at_1", label="hit@1", kind=PROPORTION, higher_is_better=True,
            description="Share of test points whose first record holds the answer.")
    def hit_at_1(run: ScoredRun) -> MetricValue | None:
        points = run.scores.answerable()
        return proportion(sum(p.rank == 1 for p in points), len(points))

A function returns ``None`` when the metric does not apply to the run (answer
accuracy without a judge): the run then has no value, shown as "—". A value
whose ``value`` is ``None`` applies but has no data (no test point): "null".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from evals.answer_scores import bleu1, token_f1
from evals.results import WHOLE_LIST, AnswerRun, CallTimings, RunResult, TestPointResult
from evals.retrieval import LEVELS, evidence_at, point_value
from evals.scoring import PointScore, Scores
from evals.stats import bootstrap_mean_interval, wilson_interval

__all__ = [
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
    "latency_slope",
    "PROPORTION",
    "SECONDS",
    "TOKENS",
    "Metric",
    "MetricValue",
    "ScoredRun",
    "compute_metrics",
    "metric",
    "proportion",
]

Kind = Literal["proportion", "mean", "tokens", "seconds", "count"]
PROPORTION: Kind = "proportion"  # successes / n, with a 95% Wilson interval
MEAN: Kind = "mean"  # a mean score in [0, 1] (MRR)
TOKENS: Kind = "tokens"  # a token count (per test point); "~" when the counts are estimates
SECONDS: Kind = "seconds"  # a wall-clock time: measured, not recomputable from the stored records
COUNT: Kind = "count"  # a number of things (records held)


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
        if name in METRICS:
            raise ValueError(f"metric {name!r} is declared twice")
        METRICS[name] = Metric(
            name, label, kind, higher_is_better, description, compute, level, cutoff, answers, optional or answers, leaderboard
        )
        return compute

    return register


def proportion(successes: int, n: int) -> MetricValue:
    interval = wilson_interval(successes, n)
    return MetricValue(
        successes / n if n else None, n, interval[0] if interval else None, interval[1] if interval else None
    )


def compute_metrics(run: ScoredRun) -> dict[str, MetricValue]:
    """Every declared metric that applies to ``run``, in declaration order, then the retrieval
    metrics at every cutoff (:data:`RETRIEVAL`)."""
    values = {}
    for declared in METRICS.values():
        value = declared.compute(run)
        if value is not None:
            values[declared.name] = value
    values.update(retrieval_metrics(run.run))
    values.update(cutoff_tokens(run))
    return values


_TOKENS_AT = "tokens_per_test_point@"


def cutoff_tokens(run: ScoredRun) -> dict[str, MetricValue]:
    """Context tokens per test point at each cutoff (``tokens_per_test_point@c``), over the answerable test
    points as at k; a strategy that ignores k spends the same at every cutoff."""
    if not run.run.cutoffs:
        return {}
    pairs = [(p, s) for c, scored in zip(run.run.conversations, run.scores.points, strict=True) for p, s in zip(c.test_points, scored, strict=True) if s.answerable]
    values = {}
    for cutoff in run.run.cutoffs:
        whole = run.run.cutoff_rule == WHOLE_LIST
        spent = [s.context_tokens if whole else (p.cutoff_tokens or {}).get(cutoff) for p, s in pairs]
        if any(v is None for v in spent):
            continue
        values[f"{_TOKENS_AT}{cutoff}"] = MetricValue(sum(spent) / len(spent) if spent else None, len(spent))
    return values


# -- the field's retrieval metrics, at every cutoff and level -----------------------------------


@dataclass(frozen=True)
class RetrievalMetric:
    """A metric measured at every cutoff and level (:mod:`evals.retrieval` scores one test point)."""

    name: str
    kind: Kind  # PROPORTION (0/1 per test point: a Wilson interval) or MEAN (a bootstrap interval)
    description: str


RETRIEVAL: dict[str, RetrievalMetric] = {
    m.name: m
    for m in (
        RetrievalMetric("recall_any", PROPORTION, "Share of test points with evidence where some evidence item is among the top k."),
        RetrievalMetric("recall_all", PROPORTION, "Share of test points with evidence where every evidence item is among the top k."),
        RetrievalMetric("recall_frac", MEAN, "Mean fraction of a test point's evidence items among the top k (LoCoMo's retrieval recall)."),
        RetrievalMetric("ndcg_any", MEAN, "Mean NDCG@k with binary relevance: evidence items ranked high score more (LongMemEval's)."),
    )
}
_RETRIEVAL_KEY = re.compile(r"^(?:(turn|session)\.)?([a-z_]+)@(\d+|k)$")


def retrieval_key(name: str, level: str, cutoff: int | str) -> str:
    """The key of a retrieval metric at one level and cutoff: ``turn.recall_any@10``; ``@k`` is the run's k."""
    return f"{level}.{name}@{cutoff}"


def parse_retrieval_key(key: str) -> tuple[str, str, int | None] | None:
    """(name, level, cutoff) of ``[LEVEL.]NAME@K`` (level turn by default; cutoff None for ``@k``), else None."""
    found = _RETRIEVAL_KEY.match(key)
    if found is None or found.group(2) not in RETRIEVAL:
        return None
    level, name, cutoff = found.group(1) or "turn", found.group(2), found.group(3)
    return name, level, None if cutoff == "k" else int(cutoff)


def declared(key: str) -> Metric | None:
    """The declaration of metric ``key``: a declared metric, or a retrieval metric at a level and cutoff."""
    if key in METRICS:
        return METRICS[key]
    if key.startswith(_TOKENS_AT) and key[len(_TOKENS_AT):].isdigit():
        cutoff = int(key[len(_TOKENS_AT):])
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
    if key.startswith(_TOKENS_AT) and key[len(_TOKENS_AT):].isdigit():
        return (1, len(LEVELS), 0, int(key[len(_TOKENS_AT):]))
    parsed = parse_retrieval_key(key)
    if parsed is not None:
        name, level, cutoff = parsed
        return (1, LEVELS.index(level), list(RETRIEVAL).index(name), cutoff or 0)
    return (2, key)


def retrieval_metrics(run: RunResult, points: list | None = None) -> dict[str, MetricValue]:
    """Every retrieval metric of ``run`` (or of ``points``, a subset of its test points) at each level and cutoff.

    Empty for a run measured without cutoffs (the original CLI) or whose
    test points list no evidence."""
    if not run.cutoffs:
        return {}
    if points is None:
        points = [p for c in run.conversations for p in c.test_points]
    values: dict[str, MetricValue] = {}
    for level in LEVELS:
        labelled = [p for p in points if evidence_at(p, level)]
        if not labelled:
            continue
        for cutoff in run.cutoffs:
            for name in RETRIEVAL:
                values[retrieval_key(name, level, cutoff)] = _retrieval_value(run, labelled, name, level, cutoff)
    return values


def _retrieval_value(run: RunResult, points: list[TestPointResult], name: str, level: str, cutoff: int) -> MetricValue:
    """``name`` at ``level`` and ``cutoff`` over ``points``: the mean of the test points that have a value."""
    scored = [v for p in points if (v := point_value(p, name, level, cutoff, run.cutoff_rule)) is not None]
    return _mean_value(scored, RETRIEVAL[name].kind)


def _mean_value(scores: list[float], kind: Kind) -> MetricValue:
    if kind == PROPORTION:
        return proportion(round(sum(scores)), len(scores))
    interval = bootstrap_mean_interval(scores)
    return MetricValue(
        sum(scores) / len(scores) if scores else None,
        len(scores),
        interval[0] if interval else None,
        interval[1] if interval else None,
    )


def _at_run_k(name: str, level: str) -> Callable[[ScoredRun], MetricValue | None]:
    """The retrieval metric at the run's own k: the leaderboard's headline columns."""

    def compute(run: ScoredRun) -> MetricValue | None:
        if not run.run.cutoffs:
            return None
        points = [p for c in run.run.conversations for p in c.test_points if evidence_at(p, level)]
        value = _retrieval_value(run.run, points, name, level, run.run.k)
        return value if value.n else None

    return compute


# -- retrieval ---------------------------------------------------------------------------------

HEADLINE = "turn.recall_any@k"  # what a corpus with evidence is ranked by (evals.tables.headline)

# The headline for a corpus with evidence: turn-level recall_any at the run's k, then NDCG and
# session-level recall_all; the keyword recall of the original harness follows.

for _name, _level, _label in (
    ("recall_any", "turn", "recall_any@k"),
    ("ndcg_any", "turn", "NDCG@k"),
    ("recall_all", "session", "session recall_all@k"),
):
    metric(
        retrieval_key(_name, _level, "k"),
        label=_label,
        kind=RETRIEVAL[_name].kind,
        higher_is_better=True,
        optional=True,
        level=_level,
        description=f"{RETRIEVAL[_name].description} At {_level} level, at the run's k.",
    )(_at_run_k(_name, _level))


@metric(
    "recall",
    label="recall@k",
    kind=PROPORTION,
    higher_is_better=True,
    description="Share of test points where a retrieved record held an expected keyword (the original harness's recall@k).",
)
def recall(run: ScoredRun) -> MetricValue:
    return proportion(run.scores.hits, run.scores.total)


@metric(
    "strict_recall",
    label="strict recall",
    kind=PROPORTION,
    higher_is_better=True,
    description="Share of test points where the retrieved records held every expected keyword.",
)
def strict_recall(run: ScoredRun) -> MetricValue:
    points = run.scores.answerable()
    return proportion(sum(p.strict_hit for p in points), len(points))


@metric(
    "mrr",
    label="MRR",
    kind=MEAN,
    higher_is_better=True,
    description="Mean of 1/rank of the first record holding the answer (0 where none does).",
)
def mrr(run: ScoredRun) -> MetricValue:
    points = run.scores.answerable()
    return MetricValue(sum(1 / p.rank for p in points if p.rank) / len(points) if points else None, len(points))


@metric(
    "evidence_recall_any",
    label="evidence any",
    kind=PROPORTION,
    higher_is_better=True,
    optional=True,
    leaderboard=False,  # turn.recall_any@k, which counts unanswerable test points too, leads the tables now
    description="Share of answerable test points with evidence turns where at least one evidence turn was retrieved.",
)
def evidence_recall_any(run: ScoredRun) -> MetricValue | None:
    return _evidence(run, lambda p: bool(p.evidence_any))


@metric(
    "evidence_recall_all",
    label="evidence all",
    kind=PROPORTION,
    higher_is_better=True,
    optional=True,
    leaderboard=False,
    description="Share of answerable test points with evidence turns where every evidence turn was retrieved.",
)
def evidence_recall_all(run: ScoredRun) -> MetricValue | None:
    return _evidence(run, lambda p: bool(p.evidence_all))


def _evidence(run: ScoredRun, found: Callable[[PointScore], bool]) -> MetricValue | None:
    """A share of the answerable test points that list evidence turns; None for a corpus without them."""
    points = [p for p in run.scores.answerable() if p.evidence_any is not None]
    return proportion(sum(found(p) for p in points), len(points)) if points else None


@metric(
    "tokens_per_test_point",
    label="tokens / test point",
    kind=TOKENS,
    higher_is_better=False,
    description="Mean context tokens (cl100k_base) of the records retrieved per test point.",
)
def tokens_per_test_point(run: ScoredRun) -> MetricValue:
    return MetricValue(run.scores.tokens_per_test_point, run.scores.total)


# -- end-to-end answers ------------------------------------------------------------------------


@metric(
    "answer_accuracy",
    label="answer accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    description="Share of judged answers the LLM judge graded correct.",
)
def answer_accuracy(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    if answers is None or answers.judge_model is None:
        return None
    return proportion(answers.correct, answers.judged)


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


@metric(
    "answer_f1",
    label="answer F1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean token F1 of each answer against the expected fact, after LoCoMo's answer normalisation (95% bootstrap interval).",
)
def answer_f1(run: ScoredRun) -> MetricValue | None:
    return _answer_mean(run, token_f1)


@metric(
    "answer_bleu1",
    label="BLEU-1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean sentence BLEU-1 of each answer against the expected fact, after LoCoMo's answer normalisation (95% bootstrap interval).",
)
def answer_bleu1(run: ScoredRun) -> MetricValue | None:
    return _answer_mean(run, bleu1)


def _answer_mean(run: ScoredRun, score: Callable[[str, str], float]) -> MetricValue | None:
    """The mean of ``score(answer, expected fact)`` over the answerable test points, with its bootstrap interval."""
    if run.answers is None:
        return None
    values = [
        score(answer.answer, point.expected_fact)
        for conversation, answers in zip(run.run.conversations, run.answers.points, strict=True)
        for point, answer in zip(conversation.test_points, answers, strict=True)
        if answer.answerable
    ]
    interval = bootstrap_mean_interval(values)
    if interval is None:
        return MetricValue(None, 0)
    return MetricValue(math.fsum(values) / len(values), len(values), *interval)


@metric(
    "llm_tokens_per_test_point",
    label="LLM tokens / test point",
    kind=TOKENS,
    higher_is_better=False,
    answers=True,
    description="Prompt and completion tokens of every LLM request (answers, verdicts, summaries) per test point.",
)
def llm_tokens_per_test_point(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    if answers is None:
        return None
    total = run.scores.total
    spent = answers.prompt_tokens + answers.completion_tokens
    return MetricValue(spent / total if total else None, total)


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


def latency_slope(buckets: list[LatencyBucket]) -> float | None:
    """The least-squares slope of log p50 against log records held (the buckets' geometric middles),
    weighted by calls; None with fewer than two buckets of non-empty memory."""
    points = [(math.log((b.held_low * b.held_high) ** 0.5), math.log(b.p50_s), b.n) for b in buckets if b.held_low > 0 and b.p50_s > 0]
    if len({x for x, _, _ in points}) < 2:
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


def retrieval_by_category(run: RunResult) -> dict[str, list[dict[str, Any]]]:
    """``metrics.retrieval_by_category``: the same rows over each category's test points."""
    points: dict[str, list[TestPointResult]] = {}
    for conversation in run.conversations:
        for point in conversation.test_points:
            if point.category is not None:
                points.setdefault(point.category, []).append(point)
    out = {category: retrieval_rows(retrieval_metrics(run, found)) for category, found in sorted(points.items())}
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
