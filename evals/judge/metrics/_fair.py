"""Equal footing: recall at fixed context budgets, how often a strategy returned more than it was
asked for, a k that reaches every session of a conversation, and a figure taken over every test point.

**Budgets.** Memories whose records differ in size (a turn against a whole session) are not compared fairly
at an equal k: ten session documents are twenty times the context of ten turns. At a budget of B tokens a
run is read as the reader would get it: its records in rank order while their tokens (cl100k_base, on the
record's text) add up to at most B. The record that would cross the budget does not count: the budget is
the context a reader is given, a record cut there may lose the evidence, and counting it would let one
record of any size pass every budget. The ranking read is the memory's own, as deep as the budget needs,
whatever k: a run keeps each test point's ranking deep enough to fill the largest budget (4,096 tokens: asked
again, untimed, at twice the deepest cutoff until its records' tokens reach it or the memory returns fewer
records than asked; :mod:`evals.run.playthrough`) with each record's tokens (``ranked_tokens``), so ten turns of
300 tokens at k=10 are no cap on the 4,096-token figure. A run that kept no such ranking (stored before it was
kept, made without cutoffs, or a strategy asked once per cutoff) is read within its records at k, as before: its
budget figure is then bounded by its k, not by the budget.
"""

from __future__ import annotations

from collections.abc import Callable

from evals.judge.metrics._registry import COUNT, MEAN, PROPORTION, MetricValue, Point, ScoredRun, metric, point_metric
from evals.judge.retrieval import budget_value
from evals.model.results import WHOLE_LIST

BUDGETS = (256, 1024, 4096)  # tokens of context
BUDGET_SUFFIX = "tok"


def budget_key(name: str, level: str, budget: int) -> str:
    """``turn.recall_any@1024tok``: the metric ``name`` at ``level`` within ``budget`` tokens."""
    return f"{level}.{name}@{budget}{BUDGET_SUFFIX}"


def _at_budget(name: str, level: str, budget: int) -> Callable[[Point], float | None]:
    return lambda point: budget_value(point.result, point.score.record_tokens, point.k, level, budget, name)


_WHAT = {
    "recall_any": "Share of test points with evidence where some evidence item is",
    "recall_frac": "Mean fraction of a test point's evidence items",
}

for _level in ("turn", "session"):
    for _name, _kind in (("recall_any", PROPORTION), ("recall_frac", MEAN)):
        for _budget in BUDGETS:
            point_metric(
                budget_key(_name, _level, _budget),
                label=f"{'session ' if _level == 'session' else ''}{_name} @{_budget:,} tokens",
                kind=_kind,
                higher_is_better=True,
                optional=True,
                presence=_level,
                level=_level,
                # The leaderboard shows turn-level recall_any at each budget; the rest are on the run page and in downloads.
                leaderboard=_level == "turn" and _name == "recall_any",
                description=(
                    f"{_WHAT[_name]} among the records that fit in {_budget:,} tokens of context "
                    "(the memory's ranking in order, past k where it was kept deeper, until the next record would pass the "
                    "budget; that one does not count). "
                    f"At {_level} level."
                ),
            )(_at_budget(_name, _level, _budget))


# -- fair play ---------------------------------------------------------------------------------


@metric(
    "retrievals_over_k",
    label="retrievals over k",
    kind=COUNT,
    higher_is_better=False,
    optional=True,
    leaderboard=False,
    description="How many retrievals returned more records than asked for (cut to the depth asked: records past it are "
    "never scored). A strategy that declares it ignores k (full_history) is not counted.",
)
def retrievals_over_k(run: ScoredRun) -> MetricValue | None:
    found = run.run.long_retrievals if run.run is not None else None
    if found is None:
        return None  # read back or imported: the stored value stands
    return MetricValue(found, len(run.run.timings.retrieve_ns) if run.run.timings is not None else 0)


@metric(
    "k_reaches_all",
    label="conversations k reaches whole",
    kind=COUNT,
    higher_is_better=False,
    optional=True,
    leaderboard=False,
    description="How many conversations have no more sessions (or, without sessions, turns) than the run's k: there "
    "k records can return every session, so retrieval is bypassed.",
)
def k_reaches_all(run: ScoredRun) -> MetricValue | None:
    if run.run is None:
        return None
    counts = [c.session_count for c in run.run.conversations]
    if not counts or any(c is None for c in counts):
        return None  # read back or imported: the stored value stands
    if run.run.cutoff_rule == WHOLE_LIST:
        return MetricValue(len(counts), len(counts))  # a whole list returns everything at any k
    return MetricValue(sum(c <= run.run.k for c in counts), len(counts))


@metric(
    "points_returning_all",
    label="test points given everything held",
    kind=COUNT,
    higher_is_better=False,
    optional=True,
    leaderboard=False,
    description="How many test points were answered with every record the memory held at that moment (k records or "
    "fewer, and no fewer than it held): there the ranking chose nothing, so the figure says nothing about retrieval.",
)
def points_returning_all(run: ScoredRun) -> MetricValue | None:
    if run.run is None or run.run.timings is None:
        return None  # read back or imported: the stored value stands
    points = [p for c in run.run.conversations for p in c.test_points]
    held = run.run.timings.retrieve_held
    if len(held) != len(points):
        return None  # asked more than once a point (a ranking per cutoff): which call answered which point is not known
    whole = sum(0 < count <= len(p.retrieved_records) for p, count in zip(points, held, strict=True))
    return MetricValue(whole, len(points))


# -- population ----------------------------------------------------------------------------------


@metric(
    "test_points",
    label="test points",
    kind=COUNT,
    higher_is_better=True,
    optional=True,
    leaderboard=False,
    description="How many test points the run played, with evidence or without: every recall figure here leaves out "
    "the points without evidence, and a published figure that counts them (MemPalace's) is over this many.",
)
def test_points(run: ScoredRun) -> MetricValue | None:
    if run.run is None:
        return None
    played = sum(len(c.test_points) for c in run.run.conversations)
    return MetricValue(played, played)


def over_every_point(value: MetricValue, points: int, without_evidence: float) -> MetricValue:
    """``value``, a mean over the test points with evidence, taken over all ``points`` test points instead, each
    point without evidence counting ``without_evidence``: the population of a source that counts those points
    rather than leaving them out (MemPalace's LoCoMo recall counts each as 1.0). Exact: the sum of the
    per-point values over the points with evidence is ``value * n``. No interval is carried over."""
    if value.value is None or points < value.n:
        return MetricValue(None, points)
    return MetricValue((value.value * value.n + without_evidence * (points - value.n)) / points, points)
