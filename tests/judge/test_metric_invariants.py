"""Invariants every declared metric holds on a corpus of each shape: no figure contradicts another.

A figure that needs sessions, evidence or categories a corpus lacks is absent (None, shown "—"), never 0 beside 1;
recall_all never passes recall_any; a proportion or a mean score lies in 0 to 1.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
from helpers import FIXTURES

from evals.judge.metrics import MEAN, METRICS, PROPORTION, MetricValue, ScoredRun, compute_metrics, declared
from evals.run.evaluate import RunConfig, evaluate

# shape: (corpus folder, has evidence, has sessions)
SHAPES = {
    "no_evidence": ("corpus_small", False, False),
    "evidence_no_sessions": ("evidence_corpus", True, False),
    "sessions": ("sessions_corpus", True, True),
}
STRATEGIES = ("oracle", "recency", "no_memory", "full_history")
K = 2
CASES = [(shape, strategy) for shape in SHAPES for strategy in STRATEGIES]


@cache
def figures(shape: str, strategy: str) -> dict[str, MetricValue]:
    """Every metric of one run of ``strategy`` over the fixture corpus of ``shape``."""
    folder = SHAPES[shape][0]
    result = evaluate(RunConfig(strategy=strategy, corpus=FIXTURES / folder, k=K, cutoffs=(1, K, 3)))
    return compute_metrics(ScoredRun(result.run, result.scores))


def _present(values: dict[str, MetricValue]) -> dict[str, float]:
    return {name: v.value for name, v in values.items() if v.value is not None}


def _needs_sessions(name: str) -> bool:
    found = declared(name)
    return name.startswith("session.") or "turn2session" in name or (found is not None and found.level == "session")


def _needs_evidence(name: str) -> bool:
    return any(part in name for part in ("recall_any", "recall_all", "recall_frac", "ndcg_any", "turn2session"))


@pytest.mark.parametrize(("shape", "strategy"), CASES)
def test_every_metric_computed_is_declared(shape: str, strategy: str):
    """Each figure a run gives is a declared metric (the registry or a retrieval metric at a level and cutoff)."""
    assert [name for name in figures(shape, strategy) if declared(name) is None] == []


@pytest.mark.parametrize(("shape", "strategy"), CASES)
def test_proportions_and_mean_scores_lie_between_0_and_1(shape: str, strategy: str):
    """Every proportion and mean score of every declared metric is absent or within 0 to 1."""
    bad = {}
    for name, value in _present(figures(shape, strategy)).items():
        kind = declared(name).kind
        if kind in (PROPORTION, MEAN) and not (math.isfinite(value) and -1e-12 <= value <= 1 + 1e-12):
            bad[name] = value
    assert bad == {}


@pytest.mark.parametrize(("shape", "strategy"), CASES)
def test_recall_all_never_passes_recall_frac_nor_recall_any(shape: str, strategy: str):
    """Wherever recall_all is present, recall_any is too, and recall_all <= recall_frac <= recall_any."""
    found = _present(figures(shape, strategy))
    bad = []
    for name, value in found.items():
        if "recall_all" not in name:
            continue
        other = name.replace("recall_all", "recall_any")
        other = other if other in found else other.replace("@k", f"@{K}")  # the run's k: the same figure
        if other not in found or value > found[other] + 1e-12:
            bad.append((name, value, found.get(other)))
        frac = found.get(name.replace("recall_all", "recall_frac"))
        if frac is not None and not value - 1e-12 <= frac <= found.get(other, 1) + 1e-12:
            bad.append((name, value, frac))
    assert bad == []


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("shape", [s for s, (_, _, sessions) in SHAPES.items() if not sessions])
def test_no_session_figure_on_a_corpus_without_sessions(shape: str, strategy: str):
    """A corpus without sessions has no session-level figure, turn2session's included: absent, not 0."""
    assert [name for name in _present(figures(shape, strategy)) if _needs_sessions(name)] == []


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_evidence_figure_on_a_corpus_without_evidence(strategy: str):
    """A corpus without evidence turns has no evidence recall or NDCG figure: absent, not 0."""
    assert [name for name in _present(figures("no_evidence", strategy)) if _needs_evidence(name)] == []


def test_the_oracle_finds_some_evidence_wherever_it_is_scored():
    """The oracle's recall_any is 1 wherever present, on every shape: it is never 0 beside a recall_all of 1."""
    below = {
        (shape, name): value
        for shape in SHAPES
        for name, value in _present(figures(shape, "oracle")).items()
        if name.split("@")[0].endswith("recall_any") and "tok" not in name and value < 1
    }
    assert below == {}


def test_every_declared_metric_is_checked_on_some_shape():
    """Every metric of the registry that a retrieval run can give is present on some shape and strategy, so the
    invariants above reach each one (those needing answers, an LLM or latency are left to their own tests)."""
    seen = {name for case in CASES for name in _present(figures(*case))}
    missing = [
        name
        for name, m in METRICS.items()
        if not m.answers and name not in seen and m.kind in (PROPORTION, MEAN) and "turn2session" not in name
    ]
    assert missing == []
