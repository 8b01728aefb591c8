"""The one-line summaries: `evals run`'s, with the leaderboard's numbers, and the original harness's."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURES

from evals.judge.stats import wilson_interval
from evals.model.tokens import TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.views.report import legacy_json, run_line, summary_line

EVIDENCE = FIXTURES / "evidence_corpus"  # mneme: 3 of 3 answerable test points, 22.666... tokens per test point


def document(corpus: Path, runner: str = "full_history", **counter) -> dict:
    """The seed JSON of one run over ``corpus``."""
    result = evaluate(RunConfig(strategy=runner, corpus=corpus), counter=TokenCounter(**counter))
    return legacy_json(result.run, result.scores)


def test_run_line_rounds_like_the_leaderboard():
    """recall to 3 decimals with its 95% interval and hits/total, tokens per test point to 1 decimal."""
    low, _ = wilson_interval(3, 3)
    assert run_line(document(EVIDENCE, "mneme"), "abc123", "results/results.duckdb") == (
        f"run abc123: mneme (embedder hash-16) keyword hit@5 1.000 [{low:.3f}, 1.000] (3/3) tokens/tp 22.7 "
        "-> results/results.duckdb"
    )


def test_run_line_marks_estimated_tokens(corpus_small):
    """Tokens counted with the ~4-characters estimate are shown with a leading '~'."""
    assert " tokens/tp ~" in run_line(document(corpus_small, exact=False), "abc123")


def test_run_line_without_test_points_says_null(tmp_path):
    """A corpus without test points gives null recall and tokens, never 0."""
    shutil.copy(FIXTURES / "golden" / "03_chat.json", tmp_path)
    assert run_line(document(tmp_path), "abc123") == "run abc123: full_history keyword hit@5 null (0/0) tokens/tp null"


def test_legacy_summary_line_keeps_full_precision():
    """The original harness's line is unchanged: key=value pairs, numbers as Python prints them."""
    assert summary_line(document(EVIDENCE, "mneme")) == "strategy=mneme convs=2 recall@5=1.0 tokens/tp=22.666666666666668"


def test_legacy_summary_line_says_tokens_were_estimated(corpus_small):
    """With the ~4-characters estimate, the original line names the tokenizer that made its tokens."""
    assert summary_line(document(corpus_small, exact=False)).endswith(" (tokens estimated: approx-4-chars-per-token)")
