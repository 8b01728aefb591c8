"""The ``evals`` command line: parse options, call one core function, echo.

Core code raises :class:`EvalsError`; this module is the only place that
turns it into a message and an exit code.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evals import __version__
from evals.corpus import check_corpus
from evals.errors import EvalsError
from evals.formatting import printable
from evals.evaluate import MAX_CONCURRENCY, MAX_CUTOFF, MAX_REQUEST_TIMEOUT, MAX_RETRIES, RunConfig, evaluate
from evals.report import dump_json, legacy_json, run_line, summary_line
from evals.results import DEFAULT_CUTOFFS, MAX_K, MAX_SEED, MIN_SEED
from evals.strategies import BACKENDS, EMBEDDERS, Registry

if TYPE_CHECKING:
    from evals.store import RunSummary, Store


def _store_api():
    """The store package, imported on first use: DuckDB and pyarrow take a while to
    load, and ``python -m evals`` (which never touches the store) should not pay for them."""
    import evals.store

    return evals.store

__all__ = ["DEFAULT_STORE", "cli", "legacy_cli", "main"]

DEFAULT_STORE = Path("results") / "results.duckdb"


class _Group(click.Group):
    """Turns :class:`EvalsError` into ``Error: …`` and exit code 1, never a traceback; Ctrl-C into exit code 130."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvalsError as exc:
            raise click.ClickException(printable(str(exc))) from exc
        except KeyboardInterrupt:
            raise _interrupted() from None


class _Command(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvalsError as exc:
            raise click.ClickException(printable(str(exc))) from exc
        except KeyboardInterrupt:
            raise _interrupted() from None


def _interrupted() -> click.exceptions.Exit:
    """Ctrl-C: exit 130 (128 + SIGINT), as shells report it. A store append is one transaction, so an
    interrupted run has appended nothing; click's own handling would say "Aborted!" and exit 1."""
    click.echo("Interrupted.", err=True)
    return click.exceptions.Exit(130)


def _echo(text: str = "", **kwargs: Any) -> None:
    """``click.echo`` for lines that hold stored or user text (ids, questions, names, paths):
    control characters are printed as escapes (:func:`evals.formatting.printable`), never acted on."""
    click.echo("\n".join(printable(line) for line in text.split("\n")), **kwargs)


class _UsageProblem(click.ClickException):
    """A problem with what was asked, as ``Error: …`` and exit code 2 (``evals gate`` keeps 1 for a regression)."""

    exit_code = 2


# -- shared options, written once ---------------------------------------------------------


class _Seconds(click.FloatRange):
    """A FloatRange that refuses nan and inf, which the range check alone lets through (nan) or words badly."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number of seconds.", param, ctx)
        return super().convert(number, param, ctx)


class _Cutoffs(click.ParamType):
    """A comma-separated list of cutoffs (1,3,5,10), each a whole number from 1 to MAX_CUTOFF."""

    name = "LIST"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        cutoffs = []
        for part in str(value).split(","):
            text = part.strip()
            if not text.isdigit() or not 1 <= int(text) <= MAX_CUTOFF:
                self.fail(f"{text!r} in {value!r} is not a cutoff: each must be a whole number from 1 to {MAX_CUTOFF}.", param, ctx)
            cutoffs.append(int(text))
        return tuple(sorted(set(cutoffs)))


_CUTOFFS = _Cutoffs()


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
            "strategy",
            default="mneme",
            show_default=True,
            help="Memory strategy to evaluate: a registered name (`evals strategies` lists them: "
            + ", ".join(Registry().names())
            + ") or a factory as package.module:function.",
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
            "'minilm' runs all-MiniLM-L6-v2 locally (the minilm extra); "
            "'openai' calls text-embedding-3-small and needs OPENAI_API_KEY.",
        ),
        click.option(
            "--seed", type=click.IntRange(MIN_SEED, MAX_SEED), default=42, show_default=True, help="Seed recorded with the run."
        ),
        click.option(
            "--k", "k", type=click.IntRange(1, MAX_K), default=5, show_default=True, help="How many records to retrieve per test point."
        ),
        click.option(
            "--with-answers",
            is_flag=True,
            help="Answer each test point with the answer model from the memory's context. "
            "python -m evals uses the default model and $OPENAI_BASE_URL/$OPENAI_API_KEY.",
        ),
        click.option(
            "--judge",
            is_flag=True,
            help="Grade each answer with the judge model; implies --with-answers.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def llm_options(func: Callable) -> Callable:
    """The chat endpoint and models used by --with-answers and --judge (``evals run``)."""
    options = [
        click.option("--answer-model", default="gpt-4o-mini", show_default=True, help="Model that answers each test point."),
        click.option("--judge-model", default="gpt-4o-mini", show_default=True, help="Model that grades each answer."),
        click.option(
            "--base-url",
            envvar="OPENAI_BASE_URL",
            show_envvar=True,
            default=None,
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1. Default: OpenAI's.",
        ),
        click.option(
            "--api-key",
            envvar="OPENAI_API_KEY",
            show_envvar=True,
            default=None,
            help="Key for the endpoint. Prefer the environment variable; the key is never stored, cached or printed.",
        ),
        click.option(
            "--concurrency", type=click.IntRange(1, MAX_CONCURRENCY), default=4, show_default=True, help="Requests in flight at once."
        ),
        click.option(
            "--request-timeout",
            type=_Seconds(0, MAX_REQUEST_TIMEOUT, min_open=True),
            default=60.0,
            show_default=True,
            help="Seconds to wait for one response before retrying.",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(0, MAX_RETRIES),
            default=5,
            show_default=True,
            help="Retries of a request after a timeout, HTTP 429 or 5xx, with exponential backoff.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def store_option(func: Callable) -> Callable:
    """``--store``, shared by every command that reads or writes the results store."""
    return click.option(
        "--store",
        "store",
        type=click.Path(path_type=Path, dir_okay=False),
        envvar="EVALS_STORE",
        show_envvar=True,
        default=None,
        help=f"Results store (a DuckDB file). Default: $EVALS_STORE, else {DEFAULT_STORE}, whose "
        "directory is created if missing; a path given here or in $EVALS_STORE must be in an existing directory.",
    )(func)


def format_option(func: Callable) -> Callable:
    """``--format``, shared by the commands that print a table."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "csv"]),
        default="table",
        show_default=True,
        help="Print an aligned table, a JSON array or CSV.",
    )(func)


def _leaderboard_format_option(func: Callable) -> Callable:
    """``--format`` of ``evals leaderboard``: the shared choices plus Markdown (the README's table)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "csv", "markdown"]),
        default="table",
        show_default=True,
        help="Print an aligned table, a JSON array, CSV, or Markdown tables (one per corpus, with intervals).",
    )(func)


def _store_path(store: Path | None) -> tuple[Path, bool]:
    """The store path and whether its directory may be created (only for the default)."""
    return (DEFAULT_STORE, True) if store is None else (store, False)


def _open_store(store: Path | None, *, read_only: bool = True) -> Store:
    path, create_parent = _store_path(store)
    return _store_api().Store.open(path, read_only=read_only, create_parent=create_parent)


def _progress() -> Callable[[int, int, str], None] | None:
    """Per-conversation progress on stderr, only when a person is watching."""
    if not sys.stderr.isatty():
        return None

    def report(done: int, total: int, conversation_id: str) -> None:
        end = "\n" if done == total else ""
        click.echo(f"\r\033[K[{done}/{total}] {printable(conversation_id)}", err=True, nl=False)
        if end:
            click.echo("", err=True)

    return report


def _write_json(path: Path, document: dict[str, Any]) -> None:
    """Write via a temporary file and rename (:func:`evals.outputs.write_output`), so a crash never leaves half a file."""
    from evals.outputs import write_output

    write_output(path, dump_json(document))


def _run_and_report(
    *, corpus: Path, strategy: str, backend: str, embedder: str, seed: int, k: int, with_answers: bool, judge: bool, output: Path | None
) -> None:
    """The original CLI's run: no store. With answers, the model, endpoint and key come from
    the defaults and $OPENAI_BASE_URL/$OPENAI_API_KEY (the original's flags stay exactly its
    own), and responses are cached beside the default store ($EVALS_STORE, else results/)."""
    config = RunConfig(
        strategy=strategy,
        backend=backend,
        embedder=embedder,
        corpus=corpus,
        k=k,
        seed=seed,
        cutoffs=(),  # the original measured at k only; its JSON has no cutoffs
        with_answers=with_answers,
        judge=judge,
    )
    cache = None
    if output is not None:
        from evals.outputs import check_output

        check_output(output, store=Path(os.environ.get("EVALS_STORE") or DEFAULT_STORE), corpus=corpus)
    _warn_about_the_key(config, None)
    if config.answers_on:
        from evals.cache import Cache, cache_path_for

        cache = Cache.open(cache_path_for(Path(os.environ.get("EVALS_STORE") or DEFAULT_STORE)))
    try:
        result = evaluate(config, progress=_progress(), cache=cache)
    finally:
        if cache is not None:
            cache.close()
    document = legacy_json(result.run, result.scores, result.answers)
    if output is not None:
        _write_json(output, document)
    _echo_llm_usage(document)
    _echo(summary_line(document, str(output) if output else None))


def _warn_about_the_key(config: RunConfig, api_key: str | None) -> None:
    """Say so on stderr, before any request, when the API key would travel unencrypted."""
    if not config.answers_on:
        return
    from evals.llm import exposed_key_warning

    warning = exposed_key_warning(config.endpoint(), api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"))
    if warning is not None:
        _echo(f"warning: {warning}", err=True)


def _echo_llm_usage(document: dict[str, Any]) -> None:
    answers = document["metrics"].get("answers")
    if answers is not None:
        _echo(
            f"llm: {answers['requests_made']} requests made, {answers['requests_cached']} from cache; "
            f"{answers['prompt_tokens']} prompt + {answers['completion_tokens']} completion tokens",
            err=True,
        )


def _option_pairs(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        out[key.strip()] = value
    return out


def _echo_summaries(summaries: Sequence[RunSummary], fmt: str, before: Sequence[str], after: Sequence[str] = (), metrics: Sequence[str] | None = None) -> None:
    from evals import tables

    if fmt == "json":
        click.echo(tables.summaries_json(summaries))
    elif fmt == "csv":
        click.echo(tables.summaries_csv(summaries), nl=False)
    else:
        _echo(tables.summary_table(summaries, before, after, metrics).text(), nl=False)


# -- the ``evals`` group -------------------------------------------------------------------


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evals")
def cli() -> None:
    """Measure long-term memory for LLM agents.

    Plays labelled conversations (a corpus folder of *.json files) through a
    memory strategy and reports recall@k and token cost at every test point.
    Every run is appended to a results store (a DuckDB file) with its git
    commit, model and date.
    """


@cli.command("run")
@run_options
@llm_options
@store_option
@click.option("--force", is_flag=True, help="Compute and append a new run even if the store already has one for these inputs.")
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Compute every embedding and LLM request afresh: neither read nor write the cache beside the store "
    "(<store>.cache.duckdb). Implies --force.",
)
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="Git repository whose HEAD commit (and dirty flag) is recorded with the run. Default: the current directory.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the result as JSON in the original harness's shape.",
)
@click.option(
    "--cutoffs",
    type=_CUTOFFS,
    default=",".join(map(str, DEFAULT_CUTOFFS)),
    show_default=True,
    help="Depths the retrieval metrics (recall_any, recall_all, recall_frac, ndcg_any at turn and session level) "
    "are measured at, beside --k; a prefix-stable strategy retrieves once, at the deepest. Comma-separated.",
)
@click.option(
    "--option",
    "strategy_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the strategy, validated by it (repeatable); `evals strategies` lists each one's options. "
    "For mneme, --option backend=sqlite is the same as --backend sqlite.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where conversations are played: in this process, or as tasks on a Ray cluster (needs the 'ray' extra). "
    "The run is the same either way, apart from timings.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDRESS",
    help="The Ray cluster to use with --executor ray, e.g. 10.0.0.5:6379. Default: $RAY_ADDRESS, else a new "
    "local instance for this run.",
)
@click.option(
    "--ray-gpus",
    type=click.FloatRange(0, 64),
    default=0.0,
    show_default=True,
    help="GPUs each embedding task asks for with --executor ray (0: CPU only; a fraction shares a GPU).",
)
def run_command(
    *,
    store: Path | None,
    force: bool,
    no_cache: bool,
    repo: Path | None,
    output: Path | None,
    strategy_options: tuple[str, ...],
    executor: str,
    ray_address: str | None,
    ray_gpus: float,
    **options: Any,
) -> None:
    """Run one strategy over a corpus, append the run to the store, print a one-line summary.

    A run made before from the same inputs (clean git commit, corpus content,
    strategy configuration, model, k, seed, package and library versions,
    tokenizer) is not recomputed: the command prints `cached: run <id>`
    instead, unless --force. A dirty working tree is never cached.

    Slow or paid work (embeddings, LLM requests) is kept in a cache file beside
    the store, so a rerun computes none of it again; the command prints how
    many were computed and how many came from the cache. --no-cache skips it.

    --with-answers answers every test point with an LLM from the strategy's
    context, --judge grades the answers, against OpenAI or any
    OpenAI-compatible server (--base-url); every response is cached.

    \b
    Examples:
      evals run --runner mneme
      evals run --runner mneme --with-answers --judge --base-url http://127.0.0.1:8080/v1
      evals run --runner full_history --corpus corpus/ --output out/full.json
      evals run --runner mneme --backend sqlite --k 10 --store /tmp/results.duckdb
    """
    api_key = options.pop("api_key")
    options["options"] = _option_pairs(strategy_options)
    path, create_parent = _store_path(store)
    config = RunConfig(**options)
    if output is not None:
        from evals.outputs import check_output

        check_output(output, store=path, corpus=config.corpus)
    _warn_about_the_key(config, api_key)
    if executor != "ray" and (ray_address is not None or ray_gpus):
        raise click.UsageError("--ray-address and --ray-gpus go with --executor ray")
    if executor == "ray" and config.answers_on and api_key is not None and api_key != os.environ.get("OPENAI_API_KEY"):
        # The key never travels with a task: each worker reads it from its own environment.
        raise click.UsageError("with --executor ray, give the key as OPENAI_API_KEY in the workers' environment, not --api-key")
    from evals.executors import make_executor
    from evals.workflow import run_with_store

    outcome = run_with_store(
        config,
        path,
        force=force,
        repo=repo,
        create_parent=create_parent,
        not_code=[output] if output else [],
        progress=_progress(),
        use_cache=not no_cache,
        api_key=api_key,
        executor=make_executor(executor, address=ray_address, gpus=ray_gpus),
    )
    if output is not None:
        _write_json(output, outcome.document)
    if not outcome.reused:
        _echo_llm_usage(outcome.document)
    if outcome.cache_hits or outcome.cache_misses:
        _echo(f"cache: {outcome.cache_misses} computed, {outcome.cache_hits} from cache", err=True)  # embeddings
    if outcome.reused:
        _echo(f"cached: {run_line(outcome.document, outcome.run_id, str(output) if output else None)}")
    else:
        _echo(run_line(outcome.document, outcome.run_id, f"{path}{', ' + str(output) if output else ''}"))


@cli.command("runs")
@store_option
@click.option("--strategy", default=None, help="Only runs of this strategy (e.g. mneme).")
@click.option("--commit", default=None, help="Only runs made at this commit (a prefix of the hash is enough).")
@format_option
def runs_command(store: Path | None, strategy: str | None, commit: str | None, fmt: str) -> None:
    """List the stored runs, newest first."""
    with _open_store(store) as opened:
        summaries = opened.runs(strategy=strategy, commit=commit)
    _echo_summaries(
        summaries,
        fmt,
        ["run", "date", "commit", "strategy", "model", "k", "corpus", "hits"],
        ["emb new/cached"],
        metrics=["recall", "tokens_per_test_point"],
    )


@cli.command("leaderboard")
@store_option
@_leaderboard_format_option
@click.option(
    "--by-category",
    is_flag=True,
    help="One row per configuration and test point category (corpora with categories only): recall, "
    "evidence recall (any/all evidence turns retrieved) and the unanswerable test points kept apart.",
)
@click.option(
    "--metric",
    "metric",
    default=None,
    metavar="NAME[@K]",
    help="Rank by this metric and show it first: a column's key (recall, mrr, retrieve_latency_p95_s...) or a "
    "retrieval metric at a cutoff, [turn.|session.]NAME@K with NAME recall_any, recall_all, recall_frac or ndcg_any "
    "and K a cutoff or k (recall_frac@25, session.recall_all@k). Default: turn.recall_any@k on corpora with "
    "evidence, else recall.",
)
def leaderboard_command(store: Path | None, fmt: str, by_category: bool, metric: str | None) -> None:
    """The latest run of each configuration on each corpus, best recall first.

    recall is hits / test points with its 95% Wilson interval; strict recall
    counts a test point only when every expected keyword was retrieved; MRR is
    the mean of 1/rank of the first matching record; tokens/tp is the mean
    context tokens per test point. Unanswerable test points are not counted.
    --format markdown prints the README's table.
    """
    if by_category and fmt == "markdown":
        raise click.UsageError("--by-category prints a table, JSON or CSV, not markdown")
    from evals import tables

    chosen = tables.leaderboard_metric(metric) if metric is not None else None
    with _open_store(store) as opened:
        summaries = tables.ranked(opened.latest_per_configuration(), chosen.name if chosen else None)
        stored = [opened.get_run(s.run_id) for s in summaries] if by_category else []
    if by_category:
        from evals import tables

        records = tables.category_records(stored)
        if fmt == "json":
            click.echo(json.dumps(records, indent=2, ensure_ascii=False))
        elif fmt == "csv":
            click.echo(tables.records_csv(records), nl=False)
        else:
            _echo(tables.category_table(records).text(), nl=False)
        return
    if fmt == "markdown":
        from evals.markdown import leaderboard_markdown

        _echo(leaderboard_markdown(summaries), nl=False)
        return
    columns = None
    if chosen is not None:
        columns = [chosen.name, *(n for n, m in tables.METRICS.items() if m.leaderboard and n != chosen.name)]
    _echo_summaries(summaries, fmt, ["strategy", "config", "model", "k", "corpus", "hits"], ["run", "commit", "date"], columns)


@cli.command("export")
@click.argument("run_id")
@store_option
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    default=Path("-"),
    help="File to write (default: standard output).",
)
def export_command(run_id: str, store: Path | None, output: Path) -> None:
    """Write a stored run as JSON: the original harness's document plus a `run` block.

    The original harness's keys are what `evals run --output` wrote for the run; the `run`
    block (run id, provenance, transcripts, per-record token counts) lets
    `evals import` add the run to another store unchanged.
    """
    from evals.exchange import export_document

    if str(output) != "-":
        from evals.outputs import check_output

        check_output(output, store=_store_path(store)[0])
    with _open_store(store) as opened:
        document = export_document(opened.get_run(run_id))
    if str(output) == "-":
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _write_json(output, document)
        _echo(f"exported run {run_id} -> {output}", err=True)


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@store_option
def import_command(files: tuple[Path, ...], store: Path | None) -> None:
    """Append the runs in exported FILEs to the store; runs already there are skipped.

    Every file is checked before anything is written, and all are written in
    one transaction: one bad file leaves the store unchanged.
    """
    from evals.exchange import read_export

    _store_api().writable_file(_store_path(store)[0])  # before reading what may be large files
    records = [read_export(file) for file in files]
    with _open_store(store, read_only=False) as opened:
        try:
            added = opened.write_records(records)
        except _store_api().CorpusConflict as exc:
            source = next(path for path, record in zip(files, records, strict=True) if record.summary.run_id == exc.run_id)
            raise EvalsError(f"{source}: {exc}") from None
    for path, record, new in zip(files, records, added, strict=True):
        state = "imported" if new else "already in store:"
        _echo(f"{state} run {record.summary.run_id} ({path})")


@cli.command("migrate")
@store_option
def migrate_command(store: Path | None) -> None:
    """Upgrade the store to this evals' schema, keeping every run.

    Commands that only read the store (runs, leaderboard, export, compare,
    build-site) refuse a store at an older schema rather than write to it;
    this command, or any run or import, upgrades it. A store already at the
    current schema is left as it is.
    """
    path = _store_path(store)[0]
    before, after = _store_api().Store.upgrade(path)
    if before == after:
        _echo(f"store {path}: already at schema {after}")
    else:
        _echo(f"store {path}: schema {before} -> {after}")


@cli.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@store_option
def compare_command(run_a: str, run_b: str, store: Path | None) -> None:
    """List the test points that flipped between RUN_A and RUN_B (hit->miss, miss->hit), with counts,
    and McNemar's exact test of whether the runs' recalls differ (and, when both runs have
    judged answers, whether their answer accuracies differ).

    The test pairs each test point's two outcomes: only the flipped points
    count, and under "no difference" they would split evenly. p is two-sided;
    a small p (say below 0.05) says the difference is unlikely to be chance.
    """
    from evals import formatting, tables
    from evals.compare import compare_runs
    from evals.metrics import METRICS

    def metric(name: str, summary: RunSummary) -> str:
        return tables.metric_text(METRICS[name], summary.metric(name), summary.tokenizer)

    with _open_store(store) as opened:
        comparison = compare_runs(opened.get_run(run_a), opened.get_run(run_b))
    for label, summary in (("A", comparison.a), ("B", comparison.b)):
        _echo(
            f"{label}: run {summary.run_id}  {summary.config_key}  commit {tables.commit_text(summary)}  {summary.date}  "
            f"corpus {summary.corpus_name}  recall {summary.hits}/{summary.total} = {metric('recall', summary)}  "
            f"strict {metric('strict_recall', summary)}  MRR {metric('mrr', summary)}"
        )
    if not comparison.same_corpus:
        _echo(
            f"note: the runs are on different corpora (A {comparison.a.corpus_digest[:12]}, "
            f"B {comparison.b.corpus_digest[:12]}); only test points present in both are compared "
            f"({comparison.only_in_a} only in A, {comparison.only_in_b} only in B)"
        )
    for title, flips in (("hit->miss", comparison.lost), ("miss->hit", comparison.gained)):
        _echo(f"{title}: {len(flips)}")
        for flip in flips:
            _echo(f"  {flip.conversation_id} turn {flip.turn_index}: {flip.question}")
    _echo(f"unchanged: {comparison.still_hit} hit, {comparison.still_missed} missed")
    _echo(
        f"McNemar exact test (paired, two-sided) over {comparison.shared} shared test points: "
        f"{len(comparison.lost)} hit->miss vs {len(comparison.gained)} miss->hit, p = {formatting.p_value_text(comparison.mcnemar_p)}"
    )
    answers = comparison.answers
    if answers is not None:
        _echo(
            f"answers judged correct over {answers.shared} shared test points: A {answers.correct_a}, B {answers.correct_b}; "
            f"McNemar: {answers.lost} correct->incorrect vs {answers.gained} incorrect->correct, p = {formatting.p_value_text(answers.mcnemar_p)}"
        )


@cli.command("gate")
@click.option("--base", required=True, metavar="REF", help="What the head is compared against: a run id, a commit (prefix) or a git branch/tag.")
@click.option("--head", required=True, metavar="REF", help="What is checked: a run id, a commit (prefix) or a git branch/tag (HEAD, say).")
@store_option
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="A configuration regresses when its Holm-adjusted McNemar p is below this and it lost more test points than it gained.",
)
@click.option(
    "--latency-factor",
    type=click.FloatRange(min=1),
    default=1.5,
    show_default=True,
    help="A configuration regresses when its retrieve p95 latency grows past this many times the base's (where both runs recorded it).",
)
@click.option(
    "--latency-floor-ms",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="A head whose retrieve p95 stays below this many milliseconds never fails on latency (sub-millisecond ratios are noise).",
)
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="CONFIG",
    help="Accept a known regression of this configuration key or strategy: reported, not failed. Repeatable.",
)
@click.option("--site-url", default=None, help="The published site's root URL: each lost test point links to the base run's drill-down there.")
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="Git repository that resolves branch and tag names. Default: the current directory.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json"]),
    default="markdown",
    show_default=True,
    help="Print the Markdown report or the same as JSON.",
)
def gate_command(
    base: str,
    head: str,
    store: Path | None,
    alpha: float,
    latency_factor: float,
    latency_floor_ms: float,
    allow: tuple[str, ...],
    site_url: str | None,
    repo: Path | None,
    fmt: str,
) -> None:
    """Fail when the head's runs regressed from the base's: exit 0 when nothing regressed, 1 when a
    configuration did, 2 when the refs cannot be compared (unknown ref, nothing comparable).

    For every configuration and corpus with runs on both sides, the latest run
    of each is compared: McNemar's exact test on the paired test points (keyword
    recall, or evidence recall where the corpus labels evidence turns), Holm-adjusted
    across the configurations, and the ratio of retrieve p95 latency where both runs
    recorded it. When --base and --head are both run ids, those two runs are compared.
    A significant improvement is reported and never fails.

    A REF is a run id, a prefix of a commit with stored runs, or a git ref resolved in
    --repo; a base branch whose tip has no runs yet falls back to its nearest
    first-parent ancestor with runs. The report (Markdown) is also appended to
    $GITHUB_STEP_SUMMARY when that is set.

    \b
    Examples:
      evals gate --base main --head HEAD
      evals gate --base 1a2b3c4d5e6f --head 6f5e4d3c2b1a --format json
    """
    from evals.gate import gate
    from evals.gate_report import gate_markdown
    from evals.outputs import check_not_an_input

    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    try:
        if summary_file:  # the report is appended to it: never to the store
            check_not_an_input(summary_file, store=_store_path(store)[0], option="$GITHUB_STEP_SUMMARY")
        with _open_store(store) as opened:
            result = gate(
                opened,
                base,
                head,
                alpha=alpha,
                latency_factor=latency_factor,
                latency_floor_s=latency_floor_ms / 1000,
                allow=allow,
                repo=repo,
                site_url=site_url,
            )
    except EvalsError as exc:
        raise _UsageProblem(str(exc)) from exc
    report = gate_markdown(result)
    click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False) if fmt == "json" else report, nl=fmt == "json")
    if summary_file:
        try:
            with open(summary_file, "a", encoding="utf-8") as out:
                out.write(report + "\n")
        except OSError as exc:
            click.echo(f"warning: cannot append the report to $GITHUB_STEP_SUMMARY ({summary_file}): {exc.strerror or exc}", err=True)
    if result.failed:
        raise click.exceptions.Exit(1)


@cli.command("build-site")
@store_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("site"),
    show_default=True,
    help="Directory to write the site into; replaced whole on each build.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes rendering pages. Default: one per CPU (up to 4) when 8 runs and corpora or more are to be rendered "
    "from a store of at most 64 MB, else 1.",
)
@click.option(
    "--store-copy",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Copy the store into the site as data/results.duckdb: auto does while it is at most 25 MB.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Render every page, instead of reusing the pages an earlier build in --out made from the same runs.",
)
def build_site_command(store: Path | None, out: Path, jobs: int | None, store_copy: str, full: bool) -> None:
    """Render the static leaderboard site from the store (read-only).

    Pages of runs and corpora that an earlier build in --out already made
    from the same inputs are reused, so adding a run renders only its pages
    (and the pages that span runs); the site is byte-identical either way.
    Warns when the site passes 800 MB (GitHub Pages publishes at most 1 GB),
    naming its largest parts.

    \b
    Preview it locally:
      evals build-site && python -m http.server -d site
    """
    from evals.site import build_site

    report = build_site(_store_path(store)[0], out, workers=jobs, incremental=not full, store_copy=store_copy)
    _echo(
        f"built {out} from {report.runs} runs: {report.pages} pages, {report.files} files, "
        f"{report.bytes / 1_000_000:.1f} MB in {report.seconds:.1f} s "
        f"({report.rendered} runs and corpora rendered, {report.reused} reused)"
    )
    for warning in report.warnings:
        _echo(f"warning: {warning}", err=True)


@cli.command("serve")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("site"),
    show_default=True,
    help="The built site to serve.",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port on 127.0.0.1.")
def serve_command(directory: Path, port: int) -> None:
    """Serve a built site on http://127.0.0.1:PORT/ until interrupted (local preview only)."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = partial(SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise EvalsError(
            f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}; choose another --port (0 picks a free one)"
        ) from None
    with server:
        _echo(f"serving {directory} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


@cli.command("strategies")
@click.option("--names", is_flag=True, help="Print only the names, one per line (for scripts).")
@click.option("--available", is_flag=True, help="Only strategies whose optional extras are installed here.")
def strategies_command(names: bool, available: bool) -> None:
    """List every registered strategy: name, where it comes from, its options with defaults and help.

    Built-ins and plug-ins are entry points of the group mneme_evals.strategies
    (docs/strategies.md); any other factory can be named as package.module:function.
    """
    registry = Registry()
    specs = [spec for spec in registry.all() if not (available and spec.missing())]
    if names:
        for spec in specs:
            click.echo(spec.name)
        return
    for spec in specs:
        needs = f"  [needs the {spec.extra} extra]" if spec.missing() and spec.extra else ""
        click.echo(f"{spec.name}  ({spec.source}){'  ' + spec.summary if spec.summary else ''}{needs}")
        for key, default, help_text in spec.option_rows():
            click.echo(f"    --option {key}=…  default {default}{'  ' + help_text if help_text else ''}")


@cli.command("check-strategy")
@click.argument("ref", metavar="NAME_OR_REF")
@click.option("--option", "strategy_options", multiple=True, metavar="KEY=VALUE", help="An option of the strategy (repeatable).")
def check_strategy_command(ref: str, strategy_options: tuple[str, ...]) -> None:
    """Run a strategy through the contract on a tiny built-in conversation, before a long run.

    NAME_OR_REF is a registered name or package.module:function. Prints one
    line per check; each failure says what to fix. Exit code 1 when any fails.
    """
    from evals.testing import run_checks

    checks = run_checks(ref, _option_pairs(strategy_options))
    for check in checks:
        click.echo(f"{'ok  ' if check.problem is None else 'FAIL'}  {check.name}" + (f": {check.problem}" if check.problem else ""))
    failed = sum(c.problem is not None for c in checks)
    click.echo(f"{ref}: {failed} of {len(checks)} checks failed" if failed else f"{ref} keeps the contract ({len(checks)} checks)")
    if failed:
        raise click.exceptions.Exit(1)


@cli.command("import-corpus")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["locomo", "longmemeval"]))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to write the corpus into: new or empty.",
)
def import_corpus_command(fmt: str, file: Path, out: Path) -> None:
    """Turn a published benchmark FILE into a corpus folder.

    \b
    FORMAT is one of:
      locomo       LoCoMo's data/locomo10.json (github.com/snap-research/locomo)
      longmemeval  LongMemEval's longmemeval_s.json, _m or _oracle (huggingface xiaowu0162/longmemeval)

    Each question becomes a test point on a turn after the history that is
    never recorded, so it sees the history alone. Evidence becomes evidence
    turns, the category or question type is kept, unanswerable questions
    (LoCoMo category 5, LongMemEval *_abs) are marked so. Prints what was
    written: conversations, questions, unanswerable, questions with keywords.
    """
    from evals.importers import import_corpus

    report = import_corpus(fmt, file, out)
    for note in report.notes:
        _echo(f"note: {note}", err=True)
    _echo(report.summary())


@cli.command("validate")
@click.argument("corpus", type=click.Path(path_type=Path), default=Path("corpus"))
def validate_command(corpus: Path) -> None:
    """Check a corpus folder and list every problem found.

    Exits 0 when the corpus is valid and 1 otherwise. CORPUS defaults to ./corpus.
    """
    conversations, problems = check_corpus(corpus)
    for problem in problems:
        _echo(str(problem), err=True)
    if problems:
        raise click.exceptions.Exit(1)
    points = sum(len(c.test_points()) for c in conversations)
    _echo(f"ok: {corpus}: {len(conversations)} conversations, {points} test points")


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
    # Ctrl-C (SIGINT) always interrupts, with exit code 130: a shell script starting a command in the
    # background hands it SIGINT ignored, and `kill -INT` would then be lost while a run is appended.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if legacy and not (args and args[0] in cli.commands):
        legacy_cli.main(args, prog_name="python -m evals")
    else:
        cli.main(args, prog_name="evals")
