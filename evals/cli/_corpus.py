"""``evals import-corpus`` and ``evals validate``: corpora in and checked."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import click

from evals.cli._base import (
    RegistryChoice,
    cli,
    echo,
)
from evals.model.corpus import check_corpus


def _corpus_folder(ctx: click.Context, param: click.Parameter, value: str) -> Path:
    """``--out`` as an absolute folder with a name. The corpus is made beside it and renamed into its
    place, so an empty value, the root (no name, no beside) and the current folder or one above it
    (which the rename would pull from under the shell) are refused."""
    if not value.strip():
        raise click.BadParameter("is empty; give a folder to write the corpus into", ctx, param)
    folder = Path(os.path.abspath(value))
    if not folder.name:
        raise click.BadParameter(f"{value} is the root folder; give a new folder to write the corpus into", ctx, param)
    here = Path(os.path.realpath(os.getcwd()))
    if here == Path(os.path.realpath(folder)) or Path(os.path.realpath(folder)) in here.parents:
        raise click.BadParameter(
            f"{value} is the current folder or holds it, and the import puts a new folder in its place; "
            "give a new folder, such as corpora/NAME",
            ctx,
            param,
        )
    return folder


def _formats() -> Iterable[str]:
    """The names of the importable benchmark units."""
    from evals.benchmarks.formats import formats

    return formats()


class _ImportCommand(click.Command):
    """Its help lists each importable unit with what its importer reads."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        from evals.benchmarks import units

        with formatter.section("Formats"):
            formatter.write_dl([(u.name, u.reads) for u in units().values() if u.importer is not None])


@cli.command("import-corpus", cls=_ImportCommand)
@click.argument("fmt", metavar="FORMAT", type=RegistryChoice(_formats))
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=str, file_okay=False),
    required=True,
    callback=_corpus_folder,
    help="Folder to write the corpus into: new or empty.",
)
def import_corpus_command(fmt: str, file: Path, out: Path) -> None:
    """Turn a published benchmark FILE into a corpus folder.

    FORMAT is an importable benchmark's name (listed below under Formats, and by
    `evals benchmarks`); FILE is its published file, or folder for a benchmark
    published as a tree of files (BEAM: one tier's folder, chats/100K).

    Each question becomes a test point on a turn after the history that is
    never recorded, so it sees the history alone. Evidence becomes evidence
    turns, the category or question type is kept, unanswerable questions
    (LoCoMo category 5, LongMemEval *_abs, BEAM abstention) are marked so. Prints what was
    written: conversations, questions, unanswerable, questions with keywords.
    """
    from evals.benchmarks.formats import import_corpus

    report = import_corpus(fmt, file, out)
    for note in report.notes:
        echo(f"note: {note}", err=True)
    echo(report.summary())


@cli.command("validate")
@click.argument("corpus", type=click.Path(path_type=Path), default=Path("corpus"))
def validate_command(corpus: Path) -> None:
    """Check a corpus folder and list every problem found.

    Exits 0 when the corpus is valid and 1 otherwise. CORPUS defaults to ./corpus.
    """
    conversations, problems = check_corpus(corpus)
    for problem in problems:
        echo(str(problem), err=True)
    if problems:
        raise click.exceptions.Exit(1)
    points = sum(len(c.test_points()) for c in conversations)
    echo(f"ok: {corpus}: {len(conversations)} conversations, {points} test points")
