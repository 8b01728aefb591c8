"""The command line as the tests call it in-process, and a store made through it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from evals.cli import cli

from . import FIXTURES

CORPUS_SMALL = FIXTURES / "corpus_small"


def evals(*args: object, env: dict | None = None) -> Result:
    """``evals ARGS`` in-process; exceptions are caught, so a traceback shows as ``result.exception``."""
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def evals_output(*args: object) -> str:
    """What ``evals ARGS`` printed, in-process, after checking it succeeded."""
    result = evals(*args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def run_id_of(output: str) -> str:
    """The run id in what `evals run` printed: ``run <id>: …`` or ``cached: run <id>: …`` (a line of its own: a
    warning line before it, such as a dirty tree's, may say "run" too)."""
    line = next(line for line in output.splitlines() if line.startswith(("run ", "cached: run ")))
    return line.split("run ", 1)[1].split(":", 1)[0]


def stored_store(folder: Path, runner: str = "no_memory") -> Path:
    """A store in ``folder`` holding one genuine run of ``runner`` on corpus_small."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "results.duckdb"
    result = evals("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store)
    assert result.exit_code == 0, result.output
    return store


def forbid_work(monkeypatch) -> None:
    """From now on, computing a run fails the test: a refusal must come before any work."""
    import evals.run.workflow

    def refuse(*args, **kwargs):
        raise AssertionError("the run was computed before the problem was found")

    monkeypatch.setattr(evals.run.workflow, "evaluate", refuse)
