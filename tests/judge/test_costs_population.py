"""Tokens per test point over the test points the headline counts.

tests/fixtures/sessions_corpus has three questions with evidence, the third marked unanswerable: LoCoMo's rule
counts it (adversarial questions have evidence), the harness's evidence rule does not.
"""

from __future__ import annotations

from helpers import FIXTURES

from evals.benchmarks import rule_of
from evals.judge.headline import EVIDENCE
from evals.judge.metrics import ScoredRun, compute_metrics, over_headline
from evals.run.evaluate import RunConfig, evaluate

CORPUS = FIXTURES / "sessions_corpus"


def _scored() -> ScoredRun:
    evaluation = evaluate(RunConfig(strategy="recency", corpus=CORPUS, k=2), cache=None)
    return ScoredRun(evaluation.run, evaluation.scores)


def test_tokens_follow_a_rule_that_counts_unanswerable_points():
    """Under LoCoMo's rule the unanswerable question with evidence counts: three test points, not two."""
    tokens = over_headline(_scored(), rule_of("locomo").metric)["tokens_per_test_point"]
    assert tokens.n == 3


def test_tokens_follow_a_rule_that_leaves_them_out():
    """Under the harness's evidence rule the answerable points with evidence count, as before: two."""
    scored = _scored()
    assert over_headline(scored, EVIDENCE.metric)["tokens_per_test_point"] == compute_metrics(scored)["tokens_per_test_point"]
    assert compute_metrics(scored)["tokens_per_test_point"].n == 2
