"""The registry: what a metric is (:class:`Metric`), the one table of declarations (:data:`METRICS`), the
decorators that fill it (:func:`metric`, :func:`point_metric`, the scope :func:`declaring`), each test point's
values computed once (:func:`point_values`) and their aggregates (:func:`grouped`), and the keys of the field's
retrieval metrics at every level and cutoff."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal

from evals.errors import EvalsError
from evals.judge.answer_scores import HARNESS_LEXICAL, Lexical
from evals.judge.retrieval import LEVELS, POINT_METRICS, cutoff_ranking, evidence_at
from evals.judge.retrieval import point_scores as retrieval_scores
from evals.judge.scoring import PointScore, Scores
from evals.judge.stats import bootstrap_mean_intervals, wilson_interval
from evals.model.formatting import whole_number
from evals.model.results import PREFIX, WHOLE_LIST, AnswerRun, PointAnswer, RunResult, TestPointResult

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
    # How the answers' protocol scores their words (its unit's, evals.benchmarks.protocol_lexical): handed in like
    # a headline rule. None is the harness's own, and only the harness's protocol may leave it out.
    lexical: Lexical | None = None
    # The headline rule's per-point metric (evals.judge.headline.Rule.metric), where the caller knows the rule: then
    # tokens per test point is a mean over the test points the headline counts, not over the answerable ones.
    headline: str | None = None


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
        _declare(
            Metric(
                name,
                label,
                kind,
                higher_is_better,
                description,
                compute,
                level,
                cutoff,
                answers,
                optional or answers,
                leaderboard,
            )
        )
        return compute

    return register


@contextmanager
def declaring() -> Iterator[None]:
    """A scope for declarations: a metric declared inside the ``with`` block (by :func:`metric` or
    :func:`point_metric`, as this module declares its own) counts everywhere until the block ends, then is
    withdrawn, leaving the registry as it was. A test declares a toy metric so, and checks every surface it
    reaches (``tests/judge/test_metrics.py``), without touching the registry's internals or leaking into the next test::

        with declaring():
            @point_metric("hit_at_1", label="hit@1", kind=PROPORTION, higher_is_better=True, description="...")
            def hit_at_1(point: Point) -> float | None:
                return float(point.score.rank == 1) if point.score.answerable else None
            ...  # runs made here compute it; tables and the site show it
    """
    saved, specs = dict(METRICS), dict(_POINT_SPECS)
    try:
        yield
    finally:
        METRICS.clear()
        METRICS.update(saved)
        _POINT_SPECS.clear()
        _POINT_SPECS.update(specs)


def _declare(declared: Metric) -> None:
    if declared.name in METRICS:
        raise ValueError(f"metric {declared.name!r} is declared twice")
    METRICS[declared.name] = declared


def proportion(successes: int, n: int) -> MetricValue:
    interval = wilson_interval(successes, n)
    return MetricValue(successes / n if n else None, n, interval[0] if interval else None, interval[1] if interval else None)


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
    protocol: str = "harness"  # the answers' protocol (evals.benchmarks.protocols)
    lexical: Lexical = HARNESS_LEXICAL  # how that protocol scores an answer's words (ScoredRun.lexical)

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

        metric(
            name,
            label=label,
            kind=kind,
            higher_is_better=higher_is_better,
            description=description,
            level=level,
            answers=answers,
            optional=optional,
            leaderboard=leaderboard,
        )(compute)
        METRICS[name] = replace(METRICS[name], per_point=per_point)
        _POINT_SPECS[name] = _Column(kind, presence, interval)
        return compute

    return register


_POINT_SPECS: dict[str, _Column] = {}
_UNANSWERABLE_TOKENS = "unanswerable_tokens"  # context tokens of the unanswerable test points, reported apart


def _lexical_of(run: ScoredRun, protocol: str) -> Lexical:
    """The run's lexical scorer: handed in with it, or the harness's for the harness's own protocol. Any other
    protocol's answers scored without theirs would be counted by the wrong rule, so that is refused."""
    if run.lexical is not None:
        return run.lexical
    if run.answers is not None and protocol != "harness":
        raise EvalsError(f"the lexical scores of protocol {protocol!r} were not handed to the judge (ScoredRun.lexical)")
    return HARNESS_LEXICAL


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
        (retrieval_key(name, level, cutoff), (name, level, cutoff))
        for level in LEVELS
        for cutoff in cutoffs
        for name in RETRIEVAL
    ]
    retrieval_keys = [(key, found) for key, found in retrieval_keys if wanted is None or key in wanted]
    token_keys = [
        (f"{_TOKENS_AT}{c}", c) for c in cutoffs if scores is not None and (wanted is None or f"{_TOKENS_AT}{c}" in wanted)
    ]
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
    # Only the levels and cutoffs asked for are scored (all of them when every metric is): a run's verdicts need one.
    levels, scored_at = LEVELS, depths
    if wanted is not None and depths:
        asked = {(level, cutoff) for _, (_, level, cutoff) in retrieval_keys}
        asked |= {(found[1], found[2] or result.k) for m in points if (found := parse_retrieval_key(m.name))}
        levels = tuple(level for level in LEVELS if any(at[0] == level for at in asked))
        scored_at = [depth for depth in depths if any(at[1] == depth for at in asked)]
    whole = result is not None and result.cutoff_rule == WHOLE_LIST
    protocol = answers.protocol if answers is not None else "harness"
    lexical = _lexical_of(run, protocol)
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
            # The budgets' deeper ranking is read by them alone (the view below); each cutoff reads down to the deepest.
            ranked = cutoff_ranking(point, depths[-1]) if depths and result.cutoff_rule == PREFIX else point
            retrieval = retrieval_scores(ranked, scored_at, result.cutoff_rule, levels) if depths else {}
            scored_points.append(retrieval)
            view = Point(point, score, answer, retrieval, result.k if result is not None else 0, protocol, lexical)  # type: ignore[arg-type]
            for m in points:
                columns[m.name].append(m.per_point(view))
            answerable = score is not None and score.answerable
            for key, cutoff in token_keys:
                columns[key].append(
                    (score.context_tokens if whole else (point.cutoff_tokens or {}).get(cutoff)) if answerable else None
                )
            if _UNANSWERABLE_TOKENS in columns:
                columns[_UNANSWERABLE_TOKENS].append(None if answerable else score.context_tokens)
    for key, (name, level, cutoff) in retrieval_keys:
        at, index = (level, cutoff), _RETRIEVAL_INDEX[name]
        columns[key] = [None if (at_cutoff := scores_at.get(at)) is None else at_cutoff[index] for scores_at in scored_points]
    if run.headline is not None and _HEADLINE_TOKENS in columns and scores is not None:
        _tokens_over_headline(run, values)
    # Each cutoff's tokens are known for every answerable test point or for none (a run read back from the store).
    if token_keys:
        flags = [s.answerable for conversation in scores.points for s in conversation]
        for key, _ in token_keys:
            if any(v is None for v, counted in zip(columns[key], flags, strict=True) if counted):
                del columns[key], values.specs[key]
    return values


_HEADLINE_TOKENS = "tokens_per_test_point"  # the mean context tokens, over the headline's test points when known


def _tokens_over_headline(run: ScoredRun, values: PointValues) -> None:
    """Tokens per test point taken over the test points the headline counts (its metric's value is not None
    there), so a figure of tokens and the headline it sits beside are over the same population (LoCoMo's
    headline counts its adversarial questions; the answerable ones alone would be 1,540 of its 1,981)."""
    headline = run.headline
    column = values.columns.get(headline)
    if column is None:
        column = point_values(ScoredRun(run.run, run.scores, run.answers, run.lexical), [headline]).columns.get(headline)
    if column is None:
        return  # the rule's metric does not apply to this run: the answerable points stand
    tokens = [score.context_tokens for conversation in run.scores.points for score in conversation]
    values.columns[_HEADLINE_TOKENS] = [t if v is not None else None for t, v in zip(tokens, column, strict=True)]


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


def over_headline(run: ScoredRun, headline: str) -> dict[str, MetricValue]:
    """The metrics whose population follows the headline (tokens per test point), taken over the test points the
    headline rule's metric ``headline`` counts: what a caller that knows the run's rule sets over
    :func:`compute_metrics`' values."""
    found = grouped(point_values(replace(run, headline=headline), [_HEADLINE_TOKENS]))[ALL]
    return {name: value for name, value in found.items() if name == _HEADLINE_TOKENS}


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
        RetrievalMetric(
            "recall_any",
            PROPORTION,
            "Share of test points with evidence where some evidence item is among the top k (trec_eval's success@k).",
        ),
        RetrievalMetric(
            "recall_all", PROPORTION, "Share of test points with evidence where every evidence item is among the top k."
        ),
        RetrievalMetric(
            "recall_frac",
            MEAN,
            "Mean fraction of a test point's evidence items among the top k (trec_eval's recall@k).",
        ),
        RetrievalMetric(
            "ndcg_any", MEAN, "Mean NDCG@k with binary relevance, rank r discounted by 1/log2(r + 1) (trec_eval's ndcg_cut)."
        ),
        RetrievalMetric(
            "ndcg_any_lme",
            MEAN,
            "Mean NDCG@k with binary relevance, ranks 1 and 2 counting fully and rank r >= 2 discounted by 1/log2(r).",
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
    cutoff = whole_number(key[len(_TOKENS_AT) :]) if key.startswith(_TOKENS_AT) else None
    if cutoff is not None:
        return Metric(
            key,
            f"tokens / test point @{cutoff}",
            TOKENS,
            False,
            f"Mean context tokens (cl100k_base) of the first {cutoff} records per test point.",
            lambda run: None,
            None,
            cutoff,
            optional=True,
            leaderboard=False,
        )
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
    cutoff = whole_number(key[len(_TOKENS_AT) :]) if key.startswith(_TOKENS_AT) else None
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
