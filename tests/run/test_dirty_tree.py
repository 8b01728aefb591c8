"""A run made from a working tree with uncommitted changes says so in one line, every time, and is marked wherever
it is shown: the leaderboard's table, Markdown and JSON, and the runs list (the site's rows show "+dirty" in their
commit cell)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import evals
from helpers.runs import stored_runs

CORPUS = FIXTURES / "corpus_small"
SAID = "warning: working tree has uncommitted changes: "


def _run(store: Path, repo: Path):
    return evals("run", "--runner", "recency", "--corpus", CORPUS, "--store", store, "--repo", repo)


@pytest.fixture
def dirty_store(tmp_path: Path, clean_repo: Path) -> Path:
    """A store (outside the repository) holding one run made from ``clean_repo`` with an untracked file in it."""
    (clean_repo / "changed.py").write_text("x = 1\n")
    store = tmp_path / "s.duckdb"
    result = _run(store, clean_repo)
    assert result.exit_code == 0, result.output
    return store


def test_every_run_on_a_dirty_tree_says_so_in_one_line(tmp_path: Path, clean_repo: Path):
    """Two runs on a modified tree each print one line naming the change (a dirty run is never reused)."""
    (clean_repo / "README").write_text("changed\n")
    store = tmp_path / "s.duckdb"
    for _ in range(2):
        result = _run(store, clean_repo)
        assert result.exit_code == 0, result.output
        said = [line for line in result.output.splitlines() if line.startswith(SAID)]
        assert len(said) == 1 and said[0].startswith(SAID + "README;")
    assert len(stored_runs(store)) == 2


def test_a_clean_tree_says_nothing_about_changes(tmp_path: Path, clean_repo: Path):
    """A run from a clean tree prints no line about uncommitted changes."""
    result = _run(tmp_path / "s.duckdb", clean_repo)
    assert result.exit_code == 0, result.output
    assert "uncommitted" not in result.output


def test_the_leaderboard_table_marks_a_dirty_run(dirty_store: Path):
    """`evals leaderboard` marks the dirty run's strategy with + and says what + means."""
    text = evals("leaderboard", "--store", dirty_store).output
    assert "recency+ " in text
    assert "+ made from a working tree with uncommitted changes" in text


def test_the_markdown_leaderboard_marks_a_dirty_run(dirty_store: Path):
    """The Markdown leaderboard says "(uncommitted changes)" beside the dirty run's strategy."""
    text = evals("leaderboard", "--store", dirty_store, "--format", "markdown").output
    assert "| recency (uncommitted changes) |" in text


def test_the_leaderboard_json_marks_a_dirty_run(dirty_store: Path):
    """The leaderboard's JSON carries dirty: true for the run."""
    (row,) = json.loads(evals("leaderboard", "--store", dirty_store, "--format", "json").output)
    assert row["dirty"] is True


def test_the_runs_list_marks_a_dirty_run(dirty_store: Path):
    """`evals runs` shows the dirty run's commit with +dirty."""
    assert "+dirty" in evals("runs", "--store", dirty_store).output
