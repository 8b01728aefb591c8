"""Fixtures shared across test files. Keep each small and say what it gives."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def corpus_small() -> Path:
    """A three-conversation corpus with four test points (tests/fixtures/corpus_small)."""
    return FIXTURES / "corpus_small"


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Where a test's results store goes: a fresh path in an existing temp directory."""
    return tmp_path / "results.duckdb"


@pytest.fixture
def clean_repo(tmp_path: Path) -> Path:
    """An empty git repository with one commit and a clean working tree."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=evals tests", "-c", "user.email=tests@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README").write_text("fixture\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fixture"], check=True)
    return repo


def build(name: str, **options):
    """The registered strategy ``name`` with these options, built as a run builds it."""
    from evals.strategies import BuildContext, Registry

    return Registry().plan(name, options, BuildContext()).build()


def configuration(name: str, **options) -> dict:
    """The configuration a run of strategy ``name`` with these options records, found without building it."""
    from evals.strategies import BuildContext, Registry

    return Registry().plan(name, options, BuildContext()).configuration
