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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from evals.answer_scores import bleu1, token_f1
from evals.results import AnswerRun, RunResult
from evals.scoring import PointScore, Scores
from evals.stats import bootstrap_mean_interval, wilson_interval

__all__ = [
    "METRICS",
    "MEAN",
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

Kind = Literal["proportion", "mean", "tokens", "seconds"]
PROPORTION: Kind = "proportion"  # successes / n, with a 95% Wilson interval
MEAN: Kind = "mean"  # a mean score in [0, 1] (MRR)
TOKENS: Kind = "tokens"  # a token count (per test point); "~" when the counts are estimates
SECONDS: Kind = "seconds"  # a wall-clock time: measured, not recomputable from the stored records


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
    """Every declared metric that applies to ``run``, in declaration order."""
    values = {}
    for declared in METRICS.values():
        value = declared.compute(run)
        if value is not None:
            values[declared.name] = value
    return values


# -- retrieval ---------------------------------------------------------------------------------


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
    description="Share of test points with evidence turns where at least one evidence turn was retrieved.",
)
def evidence_recall_any(run: ScoredRun) -> MetricValue | None:
    return _evidence(run, lambda p: bool(p.evidence_any))


@metric(
    "evidence_recall_all",
    label="evidence all",
    kind=PROPORTION,
    higher_is_better=True,
    optional=True,
    description="Share of test points with evidence turns where every evidence turn was retrieved.",
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
