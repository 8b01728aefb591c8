"""The leaderboard as Markdown: cost relative to the reference strategy."""

from __future__ import annotations

from pathlib import Path

from test_stats_cli import markdown_rows

from evals import formatting
from evals.evaluate import RunConfig, evaluate
from evals.markdown import leaderboard_markdown
from evals.provenance import Provenance
from evals.store import RunSummary, Store
from evals.strategies import REFERENCE_STRATEGY

PROVENANCE = Provenance(commit="d" * 40, dirty=False, package_version="0.1.0", mneme_version="1.0.0", python_version="3.11.7")


def latest(store_path: Path, *configs: RunConfig) -> list[RunSummary]:
    """Append one run per config to a fresh store; the latest run of each configuration, as the CLI reads them."""
    with Store.open(store_path) as store:
        for config in configs:
            store.append(evaluate(config), PROVENANCE)
        return store.latest_per_configuration()


def test_relative_cost_is_against_the_declared_reference(store_path: Path, corpus_small: Path):
    """The relative column divides each run's tokens per test point by the reference strategy's run on the corpus."""
    summaries = latest(store_path, *(RunConfig(runner=r, corpus=corpus_small) for r in ("recency", REFERENCE_STRATEGY, "no_memory")))
    table = markdown_rows(leaderboard_markdown(summaries))
    column = table[0].index(f"vs {REFERENCE_STRATEGY}")
    reference = next(s for s in summaries if s.strategy == REFERENCE_STRATEGY)
    cells = {row[0]: row[column] for row in table[2:]}
    for s in summaries:
        assert cells[s.strategy] == formatting.relative(s.tokens_per_test_point / reference.tokens_per_test_point)
    assert cells[REFERENCE_STRATEGY] == "100%"


def test_relative_cost_is_a_dash_without_a_reference_run(store_path: Path, corpus_small: Path):
    """With no run of the reference strategy on the corpus, the relative column is "—", never 0."""
    summaries = latest(store_path, RunConfig(runner="recency", corpus=corpus_small))
    table = markdown_rows(leaderboard_markdown(summaries))
    assert table[2][table[0].index(f"vs {REFERENCE_STRATEGY}")] == formatting.DASH
