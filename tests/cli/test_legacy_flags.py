"""`python -m evals` takes --backend and --embedder with every runner and ignores them where they do not apply,
as the original harness did; `evals run` keeps refusing them."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.cli import cli, legacy_cli

GOLDEN = FIXTURES / "golden"
BASELINES = ("no_memory", "full_history", "summary_buffer")


def _legacy(tmp_path: Path, name: str, *flags: str):
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(legacy_cli, [*flags, "--corpus", str(GOLDEN), "--output", str(out)])
    return result, out


@pytest.mark.parametrize("runner", BASELINES)
def test_backend_and_embedder_are_ignored_by_a_baseline(runner: str, tmp_path: Path):
    """--backend memory --embedder hash with a baseline runner writes the same bytes as without them."""
    plain, plain_out = _legacy(tmp_path, "plain", "--runner", runner)
    flagged, flagged_out = _legacy(tmp_path, "flagged", "--runner", runner, "--backend", "memory", "--embedder", "hash")
    assert (plain.exit_code, flagged.exit_code) == (0, 0), flagged.output
    assert flagged_out.read_bytes() == plain_out.read_bytes()


@pytest.mark.parametrize("runner", BASELINES)
def test_ignored_flags_get_one_note_on_stderr(runner: str, tmp_path: Path):
    """The flags a baseline ignores are named in one line on stderr; stdout is the original summary alone."""
    result, _ = _legacy(tmp_path, "o", "--runner", runner, "--backend", "sqlite", "--embedder", "openai")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1
    assert "--backend sqlite and --embedder openai ignored" in result.stderr
    assert result.stdout.startswith(f"strategy={runner} ")


def test_mneme_still_uses_the_backend(tmp_path: Path):
    """With mneme the flags apply: --backend sqlite is recorded in the strategy block."""
    result, out = _legacy(tmp_path, "o", "--runner", "mneme", "--backend", "sqlite", "--embedder", "hash")
    assert result.exit_code == 0, result.output
    assert '"backend": "SQLiteBackend"' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", [("--backend", "memory"), ("--embedder", "hash")])
def test_evals_run_still_refuses_them(flag: tuple[str, str], tmp_path: Path):
    """`evals run --runner full_history` with --backend or --embedder is a one-line error."""
    result = CliRunner().invoke(
        cli, ["run", "--runner", "full_history", *flag, "--corpus", str(GOLDEN), "--store", str(tmp_path / "s.duckdb")]
    )
    assert result.exit_code == 1
    assert "has no" in result.output
    assert len(result.output.strip().splitlines()) == 1
