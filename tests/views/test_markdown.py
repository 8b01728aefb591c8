"""The leaderboard as Markdown: labels from the stored strategy configuration, cost relative to the reference."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from helpers.html import markdown_rows

from evals.judge.metrics import MetricValue
from evals.model import formatting
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.store import RunSummary, Store
from evals.strategies import REFERENCE_STRATEGY
from evals.views.markdown import leaderboard_markdown

PROVENANCE = Provenance(commit="d" * 40, dirty=False, package_version="0.1.0", mneme_version="1.0.0", python_version="3.11.7")


def latest(store_path: Path, *configs: RunConfig) -> list[RunSummary]:
    """Append one run per config to a fresh store; the latest run of each configuration, as the CLI reads them."""
    with Store.open(store_path) as store:
        for config in configs:
            store.append(evaluate(config), PROVENANCE)
        return store.latest_per_configuration()


def latest_like(*, strategy: str, config: dict) -> RunSummary:
    """A stored run's summary, made by hand (only the fields the table shows matter)."""
    return RunSummary(
        run_id="r", commit="c", dirty=False, model="hash-16", date="2025-01-01",
        timestamp=datetime(2025, 1, 1, tzinfo=UTC), strategy=strategy, strategy_config=config, config_key="m1",
        k=5, seed=42, corpus_name="c", corpus_dir="c", corpus_digest="d", tokenizer="cl100k_base",
        package_version="0", mneme_version=None, python_version="3.11", duration_s=0.0, conversation_count=1,
        hits=1, total=2, recall=0.5, context_tokens=10, tokens_per_test_point=5.0,
        metrics={"recall": MetricValue(0.5, 2, 0.1, 0.9)},
    )  # fmt: skip


def rows_by_label(summaries: list[RunSummary]) -> dict[str, list[str]]:
    """Rows by strategy label, less the ceiling and hash-embedder marks (tested on their own)."""
    marks = (" (ceiling)", " (hash embedder: no semantics)")
    rows = markdown_rows(leaderboard_markdown(summaries))[2:]
    return {row[0].replace(marks[0], "").replace(marks[1], ""): row for row in rows}


def test_label_names_a_sqlite_backend(store_path: Path, corpus_small: Path):
    """Two mneme runs that differ in backend are each labelled with theirs."""
    summaries = latest(
        store_path,
        RunConfig(strategy="mneme", corpus=corpus_small),
        RunConfig(strategy="mneme", corpus=corpus_small, options={"backend": "sqlite"}),
    )
    assert sorted(rows_by_label(summaries)) == ["mneme", "mneme backend=sqlite"]


def test_a_strategy_with_one_row_is_its_name_alone(store_path: Path, corpus_small: Path):
    """No label noise where nothing needs telling apart."""
    summaries = latest(store_path, RunConfig(strategy="mneme", corpus=corpus_small))
    assert list(rows_by_label(summaries)) == ["mneme"]


def test_label_names_the_options_that_tell_rows_apart():
    """A row's label names its non-default options (backend, embedder); rows that would still share one (seed) are told
    apart by what differs."""
    base = latest_like(
        strategy="mneme", config={"name": "mneme", "backend": "InMemoryBackend", "embedder": "HashEmbedder", "dimensions": 16}
    )
    minilm = dataclasses.replace(
        base, strategy_config={**base.strategy_config, "embedder": "MiniLMEmbedder", "backend": "SQLiteBackend"}, config_key="m2"
    )
    seeded = dataclasses.replace(base, strategy="random_k", strategy_config={"name": "random_k", "seed": 7}, config_key="r7")
    default_seed = dataclasses.replace(seeded, strategy_config={"name": "random_k", "seed": 42}, config_key="r42")
    assert list(rows_by_label([base, minilm, seeded, default_seed])) == [
        "mneme",
        "mneme backend=sqlite embedder=minilm",
        "random_k (seed=7)",
        "random_k (seed=42)",
    ]


def test_relative_cost_is_against_the_declared_reference(store_path: Path, corpus_small: Path):
    """The relative column divides each run's tokens per test point by the reference strategy's run on the corpus."""
    summaries = latest(
        store_path, *(RunConfig(strategy=r, corpus=corpus_small) for r in ("recency", REFERENCE_STRATEGY, "no_memory"))
    )
    table = markdown_rows(leaderboard_markdown(summaries))
    column = table[0].index(f"vs {REFERENCE_STRATEGY}")
    reference = next(s for s in summaries if s.strategy == REFERENCE_STRATEGY)
    cells = {row[0].replace(" (ceiling)", ""): row[column] for row in table[2:]}
    for s in summaries:
        assert cells[s.strategy] == formatting.relative(s.tokens_per_test_point / reference.tokens_per_test_point)
    assert cells[REFERENCE_STRATEGY] == "100%"


def test_relative_cost_is_a_dash_without_a_reference_run(store_path: Path, corpus_small: Path):
    """With no run of the reference strategy on the corpus, the relative column is "—", never 0."""
    summaries = latest(store_path, RunConfig(strategy="recency", corpus=corpus_small))
    table = markdown_rows(leaderboard_markdown(summaries))
    assert table[2][table[0].index(f"vs {REFERENCE_STRATEGY}")] == formatting.DASH
