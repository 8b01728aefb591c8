"""The headline: the one figure a run is judged by, and which test points it counts.

Every surface reads it from here: the leaderboard's bold figure and its hits / total, the chart's
y-axis, the run page, each drill-down's HIT / MISS, the history's drop flag, the compare page's and
the gate's paired test, ``evals run`` / ``runs`` / ``leaderboard`` and the Markdown tables. None of
them decides hit or miss on its own.

A rule is chosen per corpus, never per run:

* a corpus whose test points name no evidence turns keeps the original harness's **keyword**
  recall@k over its answerable test points;
* a corpus with evidence is judged by **turn-level recall_any@k** (an evidence turn among the first
  k records, trec_eval's success@k), over the population its benchmark's published code scores:

  - ``locomo`` (a corpus imported from LoCoMo, ``benchmark.json``): every question with evidence,
    adversarial ones (category 5) included, as ``task_eval/evaluation.py`` of snap-research/LoCoMo
    averages its retrieval recall over every category;
  - ``longmemeval``, and any other corpus with evidence: the answerable test points with evidence,
    as ``src/retrieval/run_retrieval.py`` of LongMemEval skips ``_abs`` questions and questions
    with no evidence turn before averaging the metrics of ``src/retrieval/eval_utils.py``.

The rule names a per-point metric (:mod:`evals.judge.metrics`): its value at a test point (1, 0, or None
where the point does not count) is that point's verdict, and its stored aggregate is the headline.
So the figure, its hits / total and every point's HIT / MISS cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evals.judge.metrics import HEADLINE as EVIDENCE_ANY_AT_K
from evals.judge.metrics import MetricValue
from evals.model.corpus import BENCHMARKS

__all__ = [
    "BENCHMARKS",
    "EVIDENCE",
    "HIT",
    "KEYWORD",
    "LOCOMO",
    "LONGMEMEVAL",
    "MISS",
    "RULES",
    "UNANSWERABLE",
    "UNSCORED",
    "Headline",
    "Rule",
    "Verdict",
    "headline_of",
    "rule_for",
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
LONGMEMEVAL = Rule(
    name="longmemeval",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="answerable questions with an evidence turn (_abs questions left out)",
    corpora="LongMemEval (evals import-corpus longmemeval; benchmark.json names it)",
    follows=EVIDENCE.follows,
    unanswerable_words="LongMemEval marks this an abstention question (_abs): the history does not answer it",
)
LOCOMO = Rule(
    name="locomo",
    metric=EVIDENCE_ANY_AT_K,
    label="recall_any@k",
    population="every question with evidence, adversarial ones (category 5) included",
    counts_unanswerable=True,
    corpora="LoCoMo (evals import-corpus locomo; benchmark.json names it)",
    follows="the population of LoCoMo task_eval/evaluation.py (eval_question_answering), whose retrieval recall covers every "
    "category; the figure is recall_any@k, not the paper's fraction (recall_frac@k, shown beside it)",
    note="LoCoMo's script averages the fraction of a question's evidence found (recall_frac@k here, shown beside "
    "with the paper's figures) and counts a question without evidence as 1; here a question needs an evidence "
    "turn among the first k (a paired test needs a yes or no), and the few without evidence are left out.",
    unanswerable_words="LoCoMo category 5 (adversarial): the question's premise is not in the conversation; "
    "its evidence turns are still scored, as LoCoMo's retrieval evaluation does",
)
RULES: dict[str, Rule] = {r.name: r for r in (KEYWORD, EVIDENCE, LONGMEMEVAL, LOCOMO)}
assert all(name in RULES for name in BENCHMARKS)  # each benchmark a corpus may declare has its rule


def rule_for(benchmark: str | None, has_evidence: bool) -> Rule:
    """The rule of a corpus that declares ``benchmark`` (or none) and whose test points do (not) name evidence."""
    if not has_evidence:
        return KEYWORD
    if benchmark in BENCHMARKS:
        return RULES[benchmark]
    return EVIDENCE


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


def headline_of(benchmark: str | None, metrics: Mapping[str, MetricValue], k: int) -> Headline:
    """The headline of a run on a corpus declaring ``benchmark``, from its stored ``metrics`` (name -> value).

    Evidence is known to be labelled when the evidence metrics are present (they are only where some
    test point names an evidence turn)."""
    rule = rule_for(benchmark, "evidence_recall_any" in metrics)
    value = metrics.get(rule.metric)
    if value is None and rule.metric.endswith("@k"):
        value = metrics.get(f"{rule.metric[:-1]}{k}")
    return Headline(rule, value)


def verdicts(rule: Rule, values: Sequence[float | None], answerable: Sequence[bool]) -> list[Verdict]:
    """Each test point's verdict from the rule metric's per-point values (evals.judge.metrics.point_values)."""
    return [verdict_of(v, a) for v, a in zip(values, answerable, strict=True)]
