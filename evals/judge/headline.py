"""The headline: the one figure a run is judged by, and which test points it counts.

Every surface reads it from here: the leaderboard's bold figure and its hits / total, the chart's
y-axis, the run page, each drill-down's HIT / MISS, the history's drop flag, the compare page's and
the gate's paired test, ``evals run`` / ``runs`` / ``leaderboard`` and the Markdown tables. None of
them decides hit or miss on its own.

A rule is chosen per corpus, never per run:

* a corpus whose test points name no evidence turns keeps the original harness's **keyword**
  recall@k over its answerable test points;
* a corpus with evidence is judged by **turn-level recall_any@k** (an evidence turn among the first
  k records, trec_eval's success@k), over the population its benchmark's published code scores: the
  benchmark's unit (``evals/benchmarks/NAME/``, named by the corpus's ``benchmark.json``) declares its
  :class:`Rule` (LoCoMo's counts its adversarial questions, as ``task_eval/evaluation.py`` does); a
  corpus declaring none is judged by :data:`EVIDENCE`: the answerable test points with evidence, as
  ``src/retrieval/run_retrieval.py`` of LongMemEval skips ``_abs`` questions and questions with no
  evidence turn before averaging the metrics of ``src/retrieval/eval_utils.py``.

This module lies below the benchmarks, so it never looks a benchmark up by name: the rule a benchmark
declares is passed in (:func:`evals.benchmarks.rule_of`).

The rule names a per-point metric (:mod:`evals.judge.metrics`): its value at a test point (1, 0, or None
where the point does not count) is that point's verdict, and its stored aggregate is the headline.
So the figure, its hits / total and every point's HIT / MISS cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evals.judge.metrics import MetricValue, PointValues, ScoredRun, grouped, point_values

__all__ = [
    "EVIDENCE",
    "HIT",
    "KEYWORD",
    "MISS",
    "UNANSWERABLE",
    "UNSCORED",
    "Headline",
    "Rule",
    "Verdict",
    "headline_by_category",
    "headline_of",
    "at_k",
    "metric_at",
    "rule_for",
    "run_verdicts",
    "verdict_of",
    "verdicts",
]

Verdict = Literal["hit", "miss", "unanswerable", "unscored"]
HIT: Verdict = "hit"
MISS: Verdict = "miss"
UNANSWERABLE: Verdict = "unanswerable"  # the dataset marks it so, and the rule does not count it
UNSCORED: Verdict = "unscored"  # answerable, but the rule cannot judge it (no evidence labelled)


@dataclass(frozen=True)
class Rule:
    """How a corpus's runs are judged: the metric, the test points it counts, and whose code it follows."""

    name: str
    metric: str  # a declared per-point metric: its per-point value is the verdict
    label: str  # the figure's name, as column headings and summary lines show it
    population: str  # which test points count, in words
    follows: str  # the published code whose rule this is
    note: str = ""  # what differs from that code, if anything
    counts_unanswerable: bool = False  # test points the dataset marks unanswerable count (they have evidence)
    corpora: str = ""  # which corpora it judges, in words
    # Words for a test point the dataset marks unanswerable (the dataset's own terms).
    unanswerable_words: str = "the dataset marks this question unanswerable from the conversation"

    @property
    def by_evidence(self) -> bool:
        """The rule judges by labelled evidence turns (else by expected keywords, the original harness's way)."""
        return self.metric != KEYWORD.metric


KEYWORD = Rule(
    name="keyword",
    metric="recall",
    label="keyword hit@k",
    population="answerable test points",
    corpora="a corpus whose test points name no evidence turns (the starter corpus of the original harness)",
    follows="the original Mneme harness (a retrieved record holds an expected keyword, or the expected fact)",
)
EVIDENCE = Rule(
    name="evidence",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="answerable test points that name evidence turns",
    corpora="any other corpus whose test points name evidence turns (the starter corpus)",
    follows="LongMemEval src/retrieval/run_retrieval.py (skips _abs questions and those without an evidence turn) "
    "with recall_any of src/retrieval/eval_utils.py, at turn level",
)


def rule_for(declared: Rule | None, has_evidence: bool) -> Rule:
    """The rule of a corpus whose benchmark declares rule ``declared`` (None: no benchmark, or one without
    a rule of its own; evals.benchmarks.rule_of gives it) and whose test points do (not) name evidence."""
    if not has_evidence:
        return KEYWORD
    return declared if declared is not None else EVIDENCE


def verdict_of(value: float | None, answerable: bool) -> Verdict:
    """The verdict of a point whose rule metric came out as ``value`` (from evals.judge.metrics.point_values)."""
    if value is not None:
        return HIT if value >= 1 else MISS
    return UNANSWERABLE if not answerable else UNSCORED


@dataclass(frozen=True)
class Headline:
    """One run's headline: its rule and the rule's metric as stored (None: the run has no value)."""

    rule: Rule
    value: MetricValue | None

    @property
    def recall(self) -> float | None:
        return None if self.value is None else self.value.value

    @property
    def hits(self) -> int:
        return 0 if self.value is None else self.value.successes or 0

    @property
    def total(self) -> int:
        return 0 if self.value is None else self.value.n

    @property
    def low(self) -> float | None:
        return None if self.value is None else self.value.low

    @property
    def high(self) -> float | None:
        return None if self.value is None else self.value.high

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``--format json`` and the site's downloads."""
        return {
            "metric": self.rule.metric,
            "label": self.rule.label,
            "rule": self.rule.name,
            "value": self.recall,
            "hits": self.hits,
            "total": self.total,
            "low": self.low,
            "high": self.high,
            "population": self.rule.population,
            "follows": self.rule.follows,
        }


def headline_of(declared: Rule | None, metrics: Mapping[str, MetricValue], k: int) -> Headline:
    """The headline of a run on a corpus whose benchmark declares rule ``declared``, from its stored
    ``metrics`` (name -> value).

    Evidence is known to be labelled when the evidence metrics are present (they are only where some
    test point names an evidence turn)."""
    rule = rule_for(declared, "evidence_recall_any" in metrics)
    return Headline(rule, metric_at(metrics, rule.metric, k))


def at_k(name: str, k: int) -> str:
    """A figure's name (a rule's label, a metric's key) with the run's ``k`` filled in: ``recall_any@k`` at k = 10 is
    ``recall_any@10``. Decided here once: the store's reads, the terminal, the site's pages (their models carry the
    filled name, so no template fills it) all ask here."""
    return name.replace("@k", f"@{k}")


def metric_at(metrics: Mapping[str, MetricValue], name: str, k: int) -> MetricValue | None:
    """A run's stored value of metric ``name`` (None: it has none); a retrieval metric asked at ``@k`` that is not
    stored as such is read at the run's own ``k``. Decided here once, for the headline and every other reader."""
    value = metrics.get(name)
    if value is None and name.endswith("@k"):
        value = metrics.get(at_k(name, k))
    return value


def verdicts(rule: Rule, values: Sequence[float | None], answerable: Sequence[bool]) -> list[Verdict]:
    """Each test point's verdict from the rule metric's per-point values (evals.judge.metrics.point_values)."""
    return [verdict_of(v, a) for v, a in zip(values, answerable, strict=True)]


def run_verdicts(run: ScoredRun, metric: str) -> list[list[Verdict]]:
    """Each test point's verdict under the per-point metric ``metric`` (a rule's, or another declared one such as
    keyword recall), per conversation: what the drill-downs show, compare and the gate pair, and the downloads carry."""
    values = point_values(run, [metric])
    answerable = [score.answerable for conversation in run.scores.points for score in conversation]
    column = values.columns.get(metric, [None] * len(answerable))
    out: list[list[Verdict]] = [[] for _ in range(values.conversation_count)]
    for where, value, answered in zip(values.conversations, column, answerable, strict=True):
        out[where].append(verdict_of(value, answered))
    return out


def headline_by_category(values: PointValues, rule: Rule) -> dict[str | None, MetricValue]:
    """The rule's figure per category (None: test points without one), in order of first appearance: the same
    per-point verdicts as the headline, grouped, so the categories' hits and totals add up to the headline's.
    Every breakdown by category (``evals leaderboard --by-category``, the result JSON, the run page) counts this."""
    return {
        category: found.get(rule.metric) or MetricValue(None, 0)
        for category, found in grouped(values, "category", names=[rule.metric]).items()
    }
