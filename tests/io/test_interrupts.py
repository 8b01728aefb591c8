"""Ctrl-C anywhere is exit 130 and one line, "Interrupted.", never a traceback: also when it lands in a DuckDB
query (a cache write, a store append), which DuckDB reports as ``RuntimeError: Query interrupted``."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.cli import cli, legacy_cli
from evals.errors import EvalsError
from evals.io.interrupts import is_interruption

GOLDEN = FIXTURES / "golden"


def _raised_from(cause: BaseException) -> EvalsError:
    try:
        try:
            raise cause
        except BaseException as exc:
            raise EvalsError("cannot write the store") from exc
    except EvalsError as wrapped:
        return wrapped


def test_keyboard_interrupt_is_an_interruption():
    """A KeyboardInterrupt is one."""
    assert is_interruption(KeyboardInterrupt())


def test_duckdbs_query_interrupted_is_an_interruption():
    """DuckDB's RuntimeError('Query interrupted') is one."""
    assert is_interruption(RuntimeError("Query interrupted"))


def test_an_error_raised_from_an_interruption_is_one():
    """An error raised from DuckDB's interruption (a failed write worded by the store) is one too."""
    assert is_interruption(_raised_from(RuntimeError("Query interrupted")))


def test_other_runtime_errors_are_not_interruptions():
    """Any other RuntimeError, or one raised `from None`, is not."""
    assert not is_interruption(RuntimeError("boom"))
    error = EvalsError("x")
    error.__suppress_context__ = True
    error.__context__ = KeyboardInterrupt()
    assert not is_interruption(error)


def _interrupted_in(monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    def stop(*args, **kwargs):
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(target, stop)


def test_an_interrupted_store_append_exits_130_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`evals run` whose store append DuckDB interrupts mid-transaction: exit 130, "Interrupted."."""
    _interrupted_in(monkeypatch, "evals.store._write.StoreWriter._insert_run")
    store = tmp_path / "s.duckdb"
    result = CliRunner().invoke(cli, ["run", "--runner", "full_history", "--corpus", str(GOLDEN), "--store", str(store)])
    assert (result.exit_code, result.stderr) == (130, "Interrupted.\n")


def test_the_store_opens_empty_after_an_interrupted_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """After an append DuckDB interrupted mid-transaction, the store opens and holds no run."""
    from evals.store import Store

    store = tmp_path / "s.duckdb"
    first = CliRunner().invoke(cli, ["run", "--runner", "no_memory", "--corpus", str(GOLDEN), "--store", str(store)])
    assert first.exit_code == 0, first.output
    _interrupted_in(monkeypatch, "evals.store._write.StoreWriter._insert_run")
    CliRunner().invoke(cli, ["run", "--runner", "full_history", "--corpus", str(GOLDEN), "--store", str(store)])
    monkeypatch.undo()
    with Store.open(store, read_only=True) as opened:
        assert [s.strategy for s in opened.runs()] == ["no_memory"]


def test_an_interrupted_cache_write_exits_130_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A cache write DuckDB interrupts inside a strategy's call is the user's Ctrl-C, not the strategy's fault."""
    _interrupted_in(monkeypatch, "evals.strategies.mneme.Mneme.add")
    result = CliRunner().invoke(legacy_cli, ["--runner", "mneme", "--corpus", str(GOLDEN), "--output", str(tmp_path / "o.json")])
    assert (result.exit_code, result.stderr) == (130, "Interrupted.\n")
    assert not (tmp_path / "o.json").exists()


def test_an_interrupted_site_build_exits_130_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`evals build-site` interrupted while it reads the store: exit 130, "Interrupted."."""
    store = tmp_path / "s.duckdb"
    made = CliRunner().invoke(cli, ["run", "--runner", "no_memory", "--corpus", str(GOLDEN), "--store", str(store)])
    assert made.exit_code == 0, made.output
    _interrupted_in(monkeypatch, "evals.site.build_site")
    result = CliRunner().invoke(cli, ["build-site", "--store", str(store), "--out", str(tmp_path / "site")])
    assert (result.exit_code, result.stderr) == (130, "Interrupted.\n")
