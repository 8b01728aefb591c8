"""`evals run` as the tests drive it against the local LLM server, and what it stored."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from evals.cli import cli
from evals.store import Store, StoredRun


def evals_run(
    server, store: Path, corpus: Path, *extra: object, runner: str = "full_history", repo: Path | None = None,
    key: str = "sk-test", backoff: str = "0.01",
) -> Result:  # fmt: skip
    """`evals run` of ``runner`` on ``corpus`` against the local LLM ``server``, into ``store``, with ``extra`` options;
    ``repo`` defaults to the store's folder, which is outside git, so the store never answers with a cached run."""
    args = [
        "run", "--runner", runner, "--corpus", str(corpus), "--store", str(store), "--repo", str(repo or store.parent),
        "--base-url", server.base_url, *map(str, extra),
    ]  # fmt: skip
    return CliRunner().invoke(cli, args, env={"EVALS_LLM_BACKOFF": backoff, "OPENAI_API_KEY": key, "OPENAI_BASE_URL": None})


def stored_runs(store: Path, oldest_first: bool = False) -> list[StoredRun]:
    """Every run in ``store``, whole, newest first (or oldest first); none when there is no store file."""
    if not store.exists():
        return []
    with Store.open(store, read_only=True) as opened:
        summaries = opened.runs()
        return [opened.get_run(s.run_id) for s in (reversed(summaries) if oldest_first else summaries)]


def exported_and_imported(store: Path, run_id: str, folder: Path) -> tuple[Path, Path]:
    """`evals export` of ``run_id`` into a file in ``folder``, then `evals import` of it into a new store there:
    (the file, the new store)."""
    exported = folder / "run.json"
    CliRunner().invoke(cli, ["export", run_id, "--store", str(store), "--output", str(exported)])
    other = folder / "other.duckdb"
    result = CliRunner().invoke(cli, ["import", str(exported), "--store", str(other)])
    assert result.exit_code == 0, result.output
    return exported, other


def last_run(store: Path) -> StoredRun:
    """The newest run in ``store``, whole."""
    with Store.open(store, read_only=True) as opened:
        return opened.get_run(opened.runs()[0].run_id)
