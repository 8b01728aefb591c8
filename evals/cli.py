"""The ``evals`` command line: parse options, call one core function, echo.

Core code raises :class:`EvalsError`; this module is the only place that
turns it into a message and an exit code.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from evals import __version__
from evals.corpus import check_corpus
from evals.errors import EvalsError
from evals.evaluate import RunConfig, evaluate
from evals.report import seed_json, summary_line
from evals.strategies import RUNNERS
from evals.strategies.mneme import BACKENDS, EMBEDDERS

__all__ = ["cli", "legacy_cli", "main"]

RESERVED_NOTE = (
    "note: --with-answers/--judge are not implemented yet; the retrieval-only path runs and they change nothing."
)


class _Group(click.Group):
    """Turns :class:`EvalsError` into ``Error: …`` and exit code 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvalsError as exc:
            raise click.ClickException(str(exc)) from exc


class _Command(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvalsError as exc:
            raise click.ClickException(str(exc)) from exc


# -- shared options, written once ---------------------------------------------------------


def run_options(func: Callable) -> Callable:
    """The run flags of the original harness, shared by ``evals run`` and ``python -m evals``."""
    options = [
        click.option(
            "--corpus",
            type=click.Path(path_type=Path, file_okay=False),
            default=Path("corpus"),
            show_default=True,
            help="Folder of conversation *.json files.",
        ),
        click.option(
            "--runner",
            type=click.Choice(RUNNERS),
            default="mneme",
            show_default=True,
            help="Memory strategy to evaluate.",
        ),
        click.option(
            "--backend",
            type=click.Choice(BACKENDS),
            default="memory",
            show_default=True,
            help="Mneme storage backend (mneme only). 'sqlite' uses sqlite-vec in memory.",
        ),
        click.option(
            "--embedder",
            type=click.Choice(EMBEDDERS),
            default="hash",
            show_default=True,
            help="Mneme embedder (mneme only). 'hash' is deterministic and offline; "
            "'openai' calls text-embedding-3-small and needs OPENAI_API_KEY.",
        ),
        click.option("--seed", type=int, default=42, show_default=True, help="Seed recorded with the run."),
        click.option(
            "--k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="How many records to retrieve per test point."
        ),
        click.option("--with-answers", is_flag=True, help="Reserved: generate an LLM answer per test point (not implemented yet)."),
        click.option("--judge", is_flag=True, help="Reserved: score answers with an LLM judge (not implemented yet)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _progress() -> Callable[[int, int, str], None] | None:
    """Per-conversation progress on stderr, only when a person is watching."""
    if not sys.stderr.isatty():
        return None

    def report(done: int, total: int, conversation_id: str) -> None:
        end = "\n" if done == total else ""
        click.echo(f"\r\033[K[{done}/{total}] {conversation_id}", err=True, nl=False)
        if end:
            click.echo("", err=True)

    return report


def _write_json(path: Path, document: dict[str, Any]) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise EvalsError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _run_and_report(
    *, corpus: Path, runner: str, backend: str, embedder: str, seed: int, k: int, with_answers: bool, judge: bool, output: Path | None
) -> None:
    if with_answers or judge:
        click.echo(RESERVED_NOTE, err=True)
    config = RunConfig(runner=runner, backend=backend, embedder=embedder, corpus=corpus, k=k, seed=seed)
    result = evaluate(config, progress=_progress())
    document = seed_json(result.run, result.scores)
    if output is not None:
        _write_json(output, document)
    click.echo(summary_line(document, str(output) if output else None))


# -- the ``evals`` group -------------------------------------------------------------------


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evals")
def cli() -> None:
    """Measure long-term memory for LLM agents.

    Plays labelled conversations (a corpus folder of *.json files) through a
    memory strategy and reports recall@k and token cost at every test point.
    """


@cli.command("run")
@run_options
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the result as JSON in the original harness's shape.",
)
def run_command(**options: Any) -> None:
    """Run one strategy over a corpus and print a one-line summary.

    \b
    Examples:
      evals run --runner mneme
      evals run --runner full_history --corpus corpus/ --output out/full.json
      evals run --runner mneme --backend sqlite --k 10
    """
    _run_and_report(**options)


@cli.command("validate")
@click.argument("corpus", type=click.Path(path_type=Path), default=Path("corpus"))
def validate_command(corpus: Path) -> None:
    """Check a corpus folder and list every problem found.

    Exits 0 when the corpus is valid and 1 otherwise. CORPUS defaults to ./corpus.
    """
    conversations, problems = check_corpus(corpus)
    for problem in problems:
        click.echo(str(problem), err=True)
    if problems:
        raise click.exceptions.Exit(1)
    points = sum(len(c.test_points()) for c in conversations)
    click.echo(f"ok: {corpus}: {len(conversations)} conversations, {points} test points")


# -- ``python -m evals``: the original harness's interface --------------------------------


@click.command(
    "python -m evals",
    cls=_Command,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="The full tool is the `evals` command (evals --help); `python -m evals run ...` reaches it too.",
)
@run_options
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Where to write the JSON result.",
)
def legacy_cli(**options: Any) -> None:
    """Run a corpus through a memory strategy and write the JSON result (the original harness's CLI)."""
    _run_and_report(**options)


def main(argv: list[str] | None = None, *, legacy: bool = False) -> None:
    """Entry point. With ``legacy``, plain flags go to the original CLI and subcommands to ``evals``."""
    args = sys.argv[1:] if argv is None else argv
    if legacy and not (args and args[0] in cli.commands):
        legacy_cli.main(args, prog_name="python -m evals")
    else:
        cli.main(args, prog_name="evals")
