"""How a run is named on every surface: the library plus its non-default options."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from helpers import configuration

from evals.judge.metrics import MetricValue
from evals.store import RunSummary
from evals.views.names import configuration_name, row_names


def _summary(strategy: str, config: dict, key: str) -> RunSummary:
    return RunSummary(
        run_id=key, commit="c", dirty=False, model="none", date="2025-01-01",
        timestamp=datetime(2025, 1, 1, tzinfo=UTC), strategy=strategy, strategy_config=config, config_key=key,
        k=10, seed=42, corpus_name="c", corpus_dir="c", corpus_digest="d", tokenizer="cl100k_base",
        package_version="0", mneme_version=None, python_version="3.11", duration_s=0.0, conversation_count=1,
        hits=1, total=2, recall=0.5, context_tokens=10, tokens_per_test_point=5.0,
        metrics={"recall": MetricValue(0.5, 2, 0.1, 0.9)},
    )  # fmt: skip


def test_a_default_configuration_is_named_by_its_library_alone():
    """A run at every default is named by its strategy only."""
    assert configuration_name("bm25", configuration("bm25")) == "bm25"


def test_a_non_default_option_is_named_with_its_value():
    """A run with an option off its default carries it: bm25 stemmer=none."""
    assert configuration_name("bm25", configuration("bm25", stemmer="none")) == "bm25 stemmer=none"


def test_a_choice_is_named_by_the_value_chosen_not_by_what_it_records():
    """mneme backend=sqlite records SQLiteBackend; its name says backend=sqlite."""
    assert configuration_name("mneme", configuration("mneme", backend="sqlite")) == "mneme backend=sqlite"


def test_two_configurations_never_share_a_name():
    """Rows that would share a name (one stored before an option existed, or at another k) are told apart."""
    new = _summary("bm25", configuration("bm25"), "new")
    old = _summary("bm25", {"name": "bm25", "k1": 1.5, "b": 0.75, "library": "bm25s", "stopwords": "en"}, "old")
    other_k = replace(new, run_id="k5", config_key="k5", k=5)
    assert row_names([new, old, other_k]) == [
        "bm25 (k=10, stemming=Snowball english (nltk SnowballStemmer))", "bm25 (k=10, no stemming)",
        "bm25 (k=5, stemming=Snowball english (nltk SnowballStemmer))",
    ]  # fmt: skip
