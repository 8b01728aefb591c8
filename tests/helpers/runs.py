"""`evals run` as the tests drive it against the local LLM server, and what it stored."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from evals.cli import cli
from evals.store import Store, StoredRun


def evals_run(
    server, store: Path, corpus: Path, *extra: str, runner: str = "full_history", repo: Path | None = None,
    key: str = "sk-test", backoff: str = "0.01",
) -> Result:  # fmt: skip
    """`evals run` of ``runner`` on ``corpus`` against the local LLM ``server``, into ``store``, with ``extra`` options;
    ``repo`` defaults to the store's folder, which is outside git, so the store never answers with a cached run."""
    args = [
        "run", "--runner", runner, "--corpus", str(corpus), "--store", str(store), "--repo", str(repo or store.parent),
        "--base-url", server.base_url, *extra,
    ]  # fmt: skip
    return CliRunner().invoke(cli, args, env={"EVALS_LLM_BACKOFF": backoff, "OPENAI_API_KEY": key, "OPENAI_BASE_URL": None})


def last_run(store: Path) -> StoredRun:
    """The newest run in ``store``, whole."""
    with Store.open(store, read_only=True) as opened:
        return opened.get_run(opened.runs()[0].run_id)
