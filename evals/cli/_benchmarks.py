"""Benchmarks by name: ``evals benchmarks``, ``fetch``, ``audit-labels``, ``import-errata`` and ``run-suite``."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from evals.cli._base import (
    FiniteSeconds,
    OutputFile,
    RegistryChoice,
    cli,
    downloads_option,
    echo,
    format_choice,
    lock_option,
    max_unparsed_option,
    progress_reporter,
    repo_option,
    store_option,
    store_path,
    write_json,
)


def deadline_option(func: Callable) -> Callable:
    return click.option(
        "--download-deadline",
        "deadline",
        type=FiniteSeconds(0, None, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Seconds each download may take in all, however steadily bytes arrive. Default: 300 plus one "
        "second per 256 KiB of the file's pinned (else announced) size.",
    )(func)


def _downloads(downloads: Path | None) -> Path:
    from evals.benchmarks import default_downloads

    return downloads if downloads is not None else default_downloads()


def _lock(lock: Path | None) -> Path:
    from evals.benchmarks import DEFAULT_LOCK

    return lock if lock is not None else DEFAULT_LOCK


def _byte_progress() -> Callable[[int, int | None], None] | None:
    """Download progress on stderr, only when a person is watching."""
    if not sys.stderr.isatty():
        return None

    def report(done: int, total: int | None) -> None:
        of = f" of {total / 1e6:,.1f}" if total else ""
        click.echo(f"\r\033[K{done / 1e6:,.1f}{of} MB", err=True, nl=done == total)

    return report


@cli.command("benchmarks")
@downloads_option
@lock_option
@format_choice("text", "json", help="Print one block per benchmark, or a JSON array.")
def benchmarks_command(downloads: Path | None, lock: Path | None, fmt: str) -> None:
    """List the benchmarks `evals fetch` knows: source, version, license, size, test points, evidence, pin, fetched.

    A benchmark that the importers cannot hold faithfully yet is listed with
    the reason. A license marked non-commercial binds what you do with the data
    and with figures computed on it.
    """
    from evals.benchmarks import BENCHMARKS, Lock, status

    folder, found_lock = _downloads(downloads), Lock.read(_lock(lock))
    rows = []
    for bench in BENCHMARKS.values():
        state = status(bench, folder, found_lock)
        rows.append(
            {
                "name": bench.name,
                "title": bench.title,
                "source": bench.source,
                "version": bench.version,
                "license": bench.license,
                "non_commercial": bench.non_commercial,
                "size": bench.size,
                "test_points": bench.test_points,
                "evidence": bench.evidence,
                "metrics": bench.metrics,
                "importable": bench.importer is not None,
                "not_importable": bench.not_importable or None,
                "pin": state.trust,
                "fetched": state.fetched,
                "corpus": str(state.corpus) if state.corpus else None,
                "evaluation_sources": [source.url for source in bench.sources],
            }
        )
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        echo(f"{row['name']}  {row['title']}")
        lines = [
            ("source", row["source"]),
            ("version", row["version"]),
            ("license", row["license"]),
            ("size", row["size"]),
            ("test points", row["test_points"]),
            ("evidence", row["evidence"]),
        ]
        if row["importable"]:
            lines += [
                ("metrics", row["metrics"]),
                ("pin", row["pin"]),
                ("fetched", row["fetched"] + (f"; corpus {row['corpus']}" if row["corpus"] else "")),
            ]
        else:
            lines.append(("importable", f"not importable yet: {row['not_importable']}"))
        if row["evaluation_sources"]:
            lines.append(("eval sources", ", ".join(row["evaluation_sources"])))
        for label, value in lines:
            echo(f"  {label:<12}  {value}")
        echo()


@cli.command("fetch")
@click.argument("name")
@click.option(
    "--corpus-out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder to import the corpus into (new, empty, or an earlier import of the same file). "
    "Default: corpora/NAME in the downloads folder.",
)
@downloads_option
@lock_option
@deadline_option
def fetch_command(name: str, corpus_out: Path | None, downloads: Path | None, lock: Path | None, deadline: float | None) -> None:
    """Download benchmark NAME at its pinned version, check it, and import it as a corpus.

    The file is checked against its pinned size and SHA-256 (or, for a file
    published without a digest, against the lock file, which the first
    download writes: trust on first use). A download that is cut short, has
    another digest or is not found is refused and leaves the downloads folder
    as it was. The benchmark's evaluation sources (judge templates) are
    fetched too, at their pinned commit. $EVALS_MIRROR (a URL or a folder)
    serves the files by their published names instead. Prints where the
    corpus is.
    """
    from evals.benchmarks import fetch

    fetched = fetch(
        name,
        downloads=_downloads(downloads),
        lock_path=_lock(lock),
        corpus_out=corpus_out,
        log=lambda text: echo(text, err=True),
        progress=_byte_progress(),
        deadline=deadline,
    )
    bench = fetched.benchmark
    how = "downloaded" if fetched.downloaded else "already in the downloads folder"
    echo(f"{bench.name}: {fetched.file} ({fetched.size} bytes, {fetched.digest_of} {fetched.sha256}), {how}; {fetched.trust}")
    for source in fetched.sources:
        echo(f"evaluation source: {source}")
    echo(f"license: {bench.license}")
    if fetched.report is not None:
        for note in fetched.report.notes:
            echo(f"note: {note}", err=True)
        echo(fetched.report.summary())
    echo(f"corpus: {fetched.corpus}" + ("" if fetched.report is not None else " (imported before from the same file)"))


def _quote(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class _AuditSource(click.Option):
    """``--source``, whose help names the files the units' audits know (read from the registry when shown)."""

    @property
    def help(self) -> str:
        from evals.benchmarks import units

        files = ", ".join(u.audit.source for u in units().values() if u.audit is not None)
        return (
            f"The benchmark file CORPUS was imported from ({files}): its evidence ids that name no turn are flagged "
            "too (the import skips them)."
        )

    @help.setter
    def help(self, _value: object) -> None:
        pass  # click's own __init__ sets it; it is the registry's


@cli.command("audit-labels")
@click.argument("corpus", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--source", cls=_AuditSource, type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None)
@click.option(
    "--errata",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="A JSON file of corrections (test point -> corrected evidence turns, reason, source); the audit is run "
    "again with them and both counts shown, recorded by the file's source and SHA-256.",
)
@format_choice("text", "json", help="Print each flag with the turns involved, or the whole audit as JSON.")
def audit_labels_command(corpus: Path, source: Path | None, errata: Path | None, fmt: str) -> None:
    """Flag test points of CORPUS whose evidence labels look wrong.

    A flag is a test point none of whose labelled evidence turns shares a
    content word with the answer while another earlier turn holds every
    content word of it, or (with --source) an evidence id that names no turn.
    The audit changes no figure; it says where to look. Exits 0.
    """
    from evals.benchmarks.audit import DANGLING, MISSES, audit_corpus
    from evals.model.corpus import load_corpus

    loaded = load_corpus(corpus)
    audit = audit_corpus(loaded, source=source, errata=errata)
    if fmt == "json":
        click.echo(json.dumps(audit.as_dict(), indent=2, ensure_ascii=False))
        return
    turns = {c.id: c.turns for c in loaded.conversations}
    echo(
        f"{audit.corpus} (digest {audit.digest[:12]}): {audit.test_points} test points, {audit.checked} checked "
        "(answerable, labelled, with a content word in the answer)"
    )
    for flag in audit.flags:
        conversation = turns[flag.conversation]
        echo(f"{flag.conversation} turn {flag.turn}: {flag.kind}")
        echo(f"    question {_quote(flag.question)}  answer {_quote(flag.answer, 60)}")
        if flag.kind == DANGLING:
            echo(f"    ids naming no turn: {', '.join(flag.ids)}; evidence turns kept: {list(flag.evidence_turns) or 'none'}")
        for turn in flag.evidence_turns if flag.kind == MISSES else ():
            echo(f"    labelled  turn {turn}: {_quote(conversation[turn].content)}")
        for turn in flag.found_in[:3]:
            echo(f"    holds it  turn {turn}: {_quote(conversation[turn].content)}")
        if len(flag.found_in) > 3:
            echo(f"    … and {len(flag.found_in) - 3} more turns")
    echo(f"as published: {len(audit.flags)} flags ({audit.count(MISSES)} {MISSES}, {audit.count(DANGLING)} {DANGLING})")
    for note in audit.notes:
        echo(f"note: {note}")
    if audit.errata is not None and audit.flags_with_errata is not None:
        after = audit.flags_with_errata
        echo(
            f"with errata: {len(after)} flags "
            f"({audit.count(MISSES, after)} {MISSES}, {audit.count(DANGLING, after)} {DANGLING}); "
            f"{audit.errata.describe()}"
        )


def _errata_formats() -> Iterable[str]:
    """FORMAT: the answer-key audit formats the units bring."""
    from evals.benchmarks import errata_formats

    return errata_formats()


class _ErrataCommand(click.Command):
    """`evals import-errata`: its FORMAT list, the entries each format corrects and the option naming the benchmark
    file each audit audited are its units', read from the registry when the command is parsed or
    shown; none is named here."""

    # The options made for the registered formats, kept while the same formats are registered: click matches the
    # options it parsed against the ones it processes by identity.
    _format_options: tuple[tuple[tuple[str, str], ...], list[click.Option]] = ((), [])

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from evals.benchmarks import errata_formats

        specs = {spec.option: spec for spec in errata_formats().values()}
        key = tuple((option, spec.option_help) for option, spec in specs.items())
        if key != self._format_options[0]:
            path = click.Path(path_type=Path, dir_okay=False, exists=True)
            self._format_options = (key, [click.Option([option], type=path, help=said) for option, said in key])
        params = super().get_params(ctx)
        at = next(i for i, p in enumerate(params) if p.name == "out") + 1
        return [*params[:at], *self._format_options[1], *params[at:]]

    _template = ""  # the command's docstring, whose {formats} and {corrects} the registry fills in

    @property
    def help(self) -> str:
        from evals.benchmarks import errata_formats

        formats = errata_formats()
        width = max((len(name) for name in formats), default=0)
        listed = "\n".join(
            f"  {name:<{width}}  " + spec.help.replace("\n", "\n" + " " * (width + 4)) for name, spec in formats.items()
        )
        corrects = " or ".join(dict.fromkeys(spec.corrects for spec in formats.values()))
        return inspect.cleandoc(self._template).replace("{formats}", listed).replace("{corrects}", corrects)

    @help.setter
    def help(self, value: str | None) -> None:
        self._template = value or ""


@cli.command("import-errata", cls=_ErrataCommand)
@click.argument("fmt", metavar="FORMAT", type=RegistryChoice(_errata_formats))
@click.argument("source", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=OutputFile(), required=True, help="The errata file to write (JSON).")
@click.option(
    "--commit",
    default=None,
    help="The audit's commit, recorded with the errata. Default: SOURCE's git HEAD when SOURCE is a git checkout.",
)
@click.option(
    "--exclude",
    "exclude_kinds",
    multiple=True,
    metavar="TYPE",
    help="Leave the questions of this error_type (e.g. AMBIGUOUS) out of the figure with errata instead of "
    "correcting them; repeatable.",
)
def import_errata_command(
    fmt: str, source: Path, out: Path, commit: str | None, exclude_kinds: tuple[str, ...], **files: Path | None
) -> None:
    """Turn a published answer-key audit at SOURCE into an errata file.

    \b
    FORMAT is one of:
    {formats}

    Each entry becomes a correction of {corrects}: corrected evidence
    turns, a corrected answer, or the question left out as invalid. The file
    records the audit's repository, commit, license and the SHA-256 of every file
    read; `evals leaderboard --errata`, `evals build-site --errata` and
    `evals audit-labels --errata` read it. Nothing of the audit is shipped with
    this tool (its data are CC BY-NC 4.0): convert a copy at use time.
    """
    from evals.benchmarks import errata_formats
    from evals.io.outputs import check_output
    from evals.model.provenance import NO_GIT, git_revision

    spec = errata_formats()[fmt]
    audited = files.get(spec.option.lstrip("-").replace("-", "_")) or source / spec.default
    if not audited.is_file():
        raise click.UsageError(f"{audited}: no such file; give the file the audit audited with {spec.option}")
    check_output(out, reads=[(audited, spec.option)], folders=[(source, "the audit SOURCE")], option="--out")
    if commit is None and (source / ".git").exists():
        head = git_revision(source)[0]
        commit = None if head == NO_GIT else head
    report = spec.convert(source, audited, commit, frozenset(exclude_kinds))
    write_json(out, report.document)
    echo(f"{report.summary()} -> {out}")


@cli.command("run-suite")
@click.option(
    "--suite",
    "suite_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("evals.toml"),
    show_default=True,
    help="The suite file: benchmarks and corpora x strategies x options (docs/benchmarks.md). "
    "suites/benchmarks.toml is the published benchmarks' suite.",
)
@store_option
@downloads_option
@lock_option
@deadline_option
@repo_option("whose HEAD commit (and dirty flag) is recorded with each run")
@max_unparsed_option
def run_suite_command(
    suite_file: Path,
    store: Path | None,
    downloads: Path | None,
    lock: Path | None,
    deadline: float | None,
    repo: Path | None,
    max_unparsed: float | None,
) -> None:
    """Run every run a suite declares that the store does not hold yet.

    Fetches the suite's benchmarks first (checked, as `evals fetch` does;
    reused when already fetched), then makes each run in order, as `evals run`
    would: a run the store already holds from the same inputs on a clean
    commit is reused (`cached: run …`), not recomputed. One line per run;
    progress on stderr. The default suite, evals.toml, is the main job: the
    starter corpus with every strategy that can run here.

    A run that fails (its strategy raising, a call past --call-timeout, a
    strategy that cannot be built) does not stop the suite: it is kept in the
    store as a failed run (`evals runs` lists it; the boards show "failed:
    <reason>"), a "failed: …" line says so, and the rest are made; the command
    then exits 1 with one line naming each failure.

    With --max-unparsed, every run is still made and stored; the command then
    fails naming each run whose judge's replies were unreadable more often.
    """
    from evals.run.suite import read_suite, run_suite

    suite = read_suite(suite_file)
    path, create_parent = store_path(store)
    from evals.views.report import outcome_json, run_line, unparsed_excess

    too_unparsed: list[str] = []

    def before(number: int, total: int, planned) -> None:
        echo(f"[{number}/{total}] {planned.label}", err=True)

    def after(number: int, total: int, planned, outcome) -> None:
        document = outcome_json(outcome)
        headline = outcome.summary.headline if outcome.summary is not None else None  # as `evals run` leads
        tokens = outcome.summary.tokens_per_test_point if outcome.summary is not None else None
        if outcome.reused:
            echo(f"cached: {run_line(document, outcome.run_id, headline=headline, tokens=tokens)}")
        else:
            echo(run_line(document, outcome.run_id, str(path), headline, tokens))
        if (excess := unparsed_excess(document, max_unparsed)) is not None:
            too_unparsed.append(f"{planned.label} (run {outcome.run_id}): {excess}")

    def failed(number: int, total: int, failure) -> None:
        echo(f"failed: {failure.line}")

    progress = progress_reporter(heartbeat=True)
    try:
        made = run_suite(
            suite,
            path,
            downloads=_downloads(downloads),
            lock_path=lock,
            create_parent=create_parent,
            repo=repo,
            log=lambda text: echo(text, err=True),
            before=before,
            after=after,
            progress=progress,
            deadline=deadline,
            failed=failed,
        )
    finally:
        getattr(progress, "stop", lambda: None)()
    outcomes, failures = made.outcomes, made.failures
    total = len(outcomes) + len(failures)
    reused = sum(o.reused for o in outcomes)
    echo(
        f"suite {suite_file}: {total} runs, {len(outcomes) - reused} made now, {reused} reused"
        + (f", {len(failures)} failed" if failures else "")
        + f" from {path}",
        err=True,
    )
    problems = []
    if failures:
        problems.append(f"{len(failures)} of {total} runs failed: " + "; ".join(f.line for f in failures))
    if too_unparsed:
        problems.append("; ".join(too_unparsed))
    if problems:
        raise click.ClickException("; ".join(problems))
