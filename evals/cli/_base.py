"""What every command shares: the ``evals`` group, the error handling, shared options written once, echo helpers.

Core code raises :class:`EvalsError`; the group and the legacy command are the only places that
turn it into a message and an exit code.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evals.errors import EvalsError
from evals.io.interrupts import is_interruption
from evals.model.formatting import printable, whole_number
from evals.model.results import MAX_K, MAX_SEED, MIN_SEED
from evals.run.config import MAX_JUDGE_REPEATS
from evals.run.evaluate import (
    MAX_CONCURRENCY,
    MAX_CUTOFF,
    MAX_REQUEST_TIMEOUT,
    MAX_RETRIES,
    RunConfig,
)
from evals.strategies import BACKENDS, EMBEDDERS, Registry
from evals.views.report import dump_json

if TYPE_CHECKING:
    from evals.store import RunSummary, Store


def store_api():
    """The store package, imported on first use: DuckDB and pyarrow take a while to
    load, and ``python -m evals`` (which never touches the store) should not pay for them."""
    import evals.store

    return evals.store


__all__ = ["DEFAULT_STORE", "cli"]

DEFAULT_STORE = Path("results") / "results.duckdb"


class _ReportsErrors:
    """Turns :class:`EvalsError` into ``Error: …`` and exit code 1, never a traceback; Ctrl-C (wherever it
    landed: :func:`evals.io.interrupts.is_interruption`) into exit code 130."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)  # type: ignore[misc]
        except KeyboardInterrupt:  # while the options are parsed: click itself would say "Aborted!" and exit 1
            raise interrupted() from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except click.exceptions.Exit:
            raise
        except BaseException as exc:
            if is_interruption(exc):
                raise interrupted() from None
            if isinstance(exc, EvalsError):
                raise click.ClickException(printable(str(exc))) from exc
            if isinstance(exc, MemoryError):  # a memory limit (ulimit -v, a container's) reached: one line, not a traceback
                raise click.ClickException(
                    "out of memory: the process reached its memory limit; raise the limit (ulimit -v) or give a smaller input"
                ) from None
            raise


class EvalsGroup(_ReportsErrors, click.Group):
    """The ``evals`` group: every subcommand's errors reported as one line."""


class EvalsCommand(_ReportsErrors, click.Command):
    """A lone command (``python -m evals``) whose errors are reported as one line."""


def interrupted() -> click.exceptions.Exit:
    """Ctrl-C: exit 130 (128 + SIGINT), as shells report it. A store append is one transaction, so an
    interrupted run has appended nothing; click's own handling would say "Aborted!" and exit 1."""
    click.echo("Interrupted.", err=True)
    return click.exceptions.Exit(130)


def echo(text: str = "", **kwargs: Any) -> None:
    """``click.echo`` for lines that hold stored or user text (ids, questions, names, paths):
    control characters are printed as escapes (:func:`evals.model.formatting.printable`), never acted on."""
    click.echo("\n".join(printable(line) for line in text.split("\n")), **kwargs)


class UsageProblem(click.ClickException):
    """A problem with what was asked, as ``Error: …`` and exit code 2 (``evals gate`` keeps 1 for a regression)."""

    exit_code = 2


# -- shared options, written once ---------------------------------------------------------


_ASCII_WHOLE = re.compile(r"[+-]?[0-9]+")


class Whole(click.IntRange):
    """An IntRange that reads ASCII digits only, as docs/cli.md says: Python's ``int()`` also reads other
    scripts' digits (``'٣'`` is 3). Every whole-number option takes this type."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _ASCII_WHOLE.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a whole number written in ASCII digits.", param, ctx)
        return super().convert(value, param, ctx)


class Finite(click.FloatRange):
    """A FloatRange that refuses nan and inf: the range check alone lets nan through (every comparison
    with nan is false) and words inf badly; and reads ASCII only (``float()`` also reads ``'٠.5'``).
    Every float option takes this type."""

    unit = ""  # what the number counts, for the message ("of seconds")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number written in ASCII digits.", param, ctx)
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number{' ' + self.unit if self.unit else ''}.", param, ctx)
        return super().convert(number, param, ctx)


class FiniteSeconds(Finite):
    unit = "of seconds"


class Cutoffs(click.ParamType):
    """A comma-separated list of cutoffs (1,3,5,10), each a whole number from 1 to MAX_CUTOFF."""

    name = "LIST"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        cutoffs = []
        for part in str(value).split(","):
            text = part.strip()
            cutoff = whole_number(text)  # ASCII digits only: '²' passes str.isdigit() and then fails int()
            if cutoff is None or not 1 <= cutoff <= MAX_CUTOFF:
                self.fail(
                    f"{text!r} in {value!r} is not a cutoff: each must be a whole number from 1 to {MAX_CUTOFF}.", param, ctx
                )
            cutoffs.append(cutoff)
        return tuple(sorted(set(cutoffs)))


CUTOFFS = Cutoffs()


class RegistryChoice(click.Choice):
    """A choice among names the benchmark registry holds (``names()``: its protocols, its importable units...), read
    when Click asks, so a unit registered later (a plug-in's, a test's) is a choice too."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._names = names
        super().__init__((), case_sensitive=True)

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, _value: object) -> None:
        pass  # Click's own __init__ sets them; they are the registry's


class OutputFile(click.Path):
    """A file to write (``--output``): what click's Path would lose is checked on the text as typed.
    A trailing ``/`` names a folder (click would write a file of that name); ``-`` stays ``-`` (the
    command says whether that is standard output); the rest is :func:`evals.io.outputs.check_output`'s."""

    def __init__(self, *, allow_dash: bool = False) -> None:
        super().__init__(path_type=Path, dir_okay=False, allow_dash=allow_dash)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            if not value:
                self.fail("is empty; give a file path.", param, ctx)
            if value.endswith(("/", os.sep)):
                self.fail(
                    f"{value!r} ends with '/', so it names a folder; give a file path such as {value}result.json.", param, ctx
                )
        return super().convert(value, param, ctx)


OUTPUT_FILE = OutputFile()


def absolute(path: Path | None) -> Path | None:
    """``path`` made absolute against the working directory now (no symlink resolved, ``..`` kept),
    so that a plug-in changing the working directory cannot move where the command reads or writes."""
    return None if path is None else Path(path).absolute()


class ModelName(click.ParamType):
    """A model name (--answer-model, --judge-model): not blank, no spaces around it, no control characters."""

    name = "MODEL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from evals.run.config import model_name_problem

        problem = model_name_problem(str(value))
        if problem is not None:
            self.fail(f"{problem}.", param, ctx)
        return value


class BaseURL(click.ParamType):
    """An endpoint's base URL (--base-url): http(s), well-formed, no credentials (evals.io.endpoints.check_base_url)."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from evals.io.endpoints import check_base_url

        try:
            return check_base_url(str(value), "the URL")
        except EvalsError as exc:
            self.fail(f"{str(exc).removeprefix('the URL: ')}.", param, ctx)


MODEL_NAME = ModelName()
BASE_URL = BaseURL()


def mneme_flags(func: Callable) -> Callable:
    """The original harness's ``--backend``/``--embedder``, which only ``python -m evals`` keeps: it maps them onto
    Mneme's options (``evals.run.config.legacy_flag_options``), and ignores them for a strategy without them."""
    options = [
        click.option(
            "--backend",
            type=click.Choice(BACKENDS),
            default=None,
            help="Mneme storage backend (Mneme's backend option; ignored for other runners). Default: memory. "
            "'sqlite' uses sqlite-vec in memory.",
        ),
        click.option(
            "--embedder",
            type=click.Choice(tuple(EMBEDDERS)),
            default=None,
            help="Mneme embedder (Mneme's embedder option; ignored for other runners). Default: hash. "
            "'hash' is deterministic and offline; "
            "'minilm' runs all-MiniLM-L6-v2 locally (the minilm extra); "
            "'minilm-bf16' runs it in bf16, about twice as fast, where the CPU has bf16 (another model's vectors); "
            "'openai' calls text-embedding-3-small and needs OPENAI_API_KEY.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def moved_to_option(func: Callable) -> Callable:
    """``--backend``/``--embedder`` on a command that has them no more: refused, naming the option that replaced
    each (they are Mneme's options, given as ``--option NAME=VALUE`` like every strategy's)."""

    def refuse(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:  # one line, exit 1, as every refused run
            raise click.ClickException(
                f"evals {ctx.info_name} has no --{param.name}: it is Mneme's option, --option {param.name}={value} "
                "(`evals strategies` lists each strategy's options)"
            )

    for name in ("embedder", "backend"):
        func = click.option(
            f"--{name}",
            hidden=True,
            expose_value=False,
            callback=refuse,
            metavar="VALUE",
            help=f"Gone: Mneme's {name} is --option {name}=VALUE.",
        )(func)
    return func


class RunnerOption(click.Option):
    """``--runner``, whose help names the registered strategies when help is shown: reading the entry
    points at every start would cost a run that never shows its help."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.help is not None and "{names}" in self.help:
            self.help = self.help.replace("{names}", ", ".join(Registry().names()))
        return super().get_help_record(ctx)


def run_options(func: Callable) -> Callable:
    """The run flags of the original harness, shared by ``evals run`` and ``python -m evals`` (Mneme's
    ``--backend``/``--embedder`` only ``python -m evals`` keeps: :func:`mneme_flags`)."""
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
            cls=RunnerOption,
            default="mneme",
            show_default=True,
            help="Memory strategy to evaluate: a registered name (`evals strategies` lists them: {names}) "
            "or a factory as package.module:function.",
        ),
        click.option("--seed", type=Whole(MIN_SEED, MAX_SEED), default=42, show_default=True, help="Seed recorded with the run."),
        click.option(
            "--k",
            "k",
            type=Whole(1, MAX_K),
            default=5,
            show_default=True,
            help="How many records to retrieve per test point.",
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
        click.option(
            "--answer-model",
            type=MODEL_NAME,
            default="gpt-4o-mini",
            show_default=True,
            help="Model that answers each test point.",
        ),
        click.option(
            "--judge-model", type=MODEL_NAME, default="gpt-4o-mini", show_default=True, help="Model that grades each answer."
        ),
        click.option(
            "--base-url",
            type=BASE_URL,
            envvar="OPENAI_BASE_URL",
            show_envvar=True,
            default=None,
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1. Default: OpenAI's. "
            "Recorded with the run, so it may not hold credentials (user:password@, ?key=…): give the key apart.",
        ),
        click.option(
            "--api-key",
            envvar="OPENAI_API_KEY",
            show_envvar=True,
            default=None,
            help="Key for the endpoint. Prefer the environment variable; the key is never stored, cached or printed.",
        ),
        click.option(
            "--concurrency",
            type=Whole(1, MAX_CONCURRENCY),
            default=4,
            show_default=True,
            help="Requests in flight at once.",
        ),
        click.option(
            "--request-timeout",
            type=FiniteSeconds(0, MAX_REQUEST_TIMEOUT, min_open=True),
            default=60.0,
            show_default=True,
            help="Seconds one attempt may take, from connecting to the last byte of the response, before it is retried.",
        ),
        click.option(
            "--max-retries",
            type=Whole(0, MAX_RETRIES),
            default=5,
            show_default=True,
            help="Retries of a request after a timeout, HTTP 429 or 5xx, with exponential backoff.",
        ),
        click.option(
            "--judge-repeats",
            type=Whole(1, MAX_JUDGE_REPEATS),
            default=1,
            show_default=True,
            help="Ask each verdict this many times (with --judge): the run reports answer accuracy's mean and sd over "
            "the repeats; each point's verdict is the first repeat's. The first repeat's cache key is a single verdict's.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


DOWNLOADS_HELP = (
    "Folder that downloaded benchmark files, their evaluation sources and fetched corpora go to. "
    "Default: $XDG_CACHE_HOME/mneme-evals, else ~/.cache/mneme-evals."
)
LOCK_ENV = "EVALS_BENCHMARKS_LOCK"
LOCK_HELP = (
    "Lock file recording the size and SHA-256 of each file published without a digest at its first "
    "download (trust on first use); every later fetch must match it. Commit it. Default: benchmarks.lock."
)


def downloads_option(func: Callable | None = None, *, help: str = DOWNLOADS_HELP) -> Callable:
    """``--downloads`` ($EVALS_DOWNLOADS), declared once: the folder `evals fetch` downloads into. A command says
    in ``help`` what it reads there; used bare as a decorator, the fetch commands' text."""

    def option(f: Callable) -> Callable:
        return click.option(
            "--downloads",
            type=click.Path(path_type=Path, file_okay=False),
            envvar="EVALS_DOWNLOADS",
            show_envvar=True,
            default=None,
            help=help,
        )(f)

    return option if func is None else option(func)


def lock_option(func: Callable | None = None, *, help: str = LOCK_HELP) -> Callable:
    """``--lock`` ($EVALS_BENCHMARKS_LOCK), declared once: the benchmarks' lock file."""

    def option(f: Callable) -> Callable:
        return click.option(
            "--lock", type=click.Path(path_type=Path, dir_okay=False), envvar=LOCK_ENV, show_envvar=True, default=None, help=help
        )(f)

    return option if func is None else option(func)


def repo_option(does: str) -> Callable[[Callable], Callable]:
    """``--repo``, declared once: the git repository a command reads, which ``does`` what it is read for."""
    return click.option(
        "--repo",
        type=click.Path(path_type=Path, file_okay=False, exists=True),
        default=None,
        help=f"Git repository {does}. Default: the current directory.",
    )


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


def format_choice(*choices: str, help: str) -> Callable[[Callable], Callable]:
    """``--format`` (``fmt``), declared once: a command's ``choices``, the first its default, and what each prints."""
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=choices[0], show_default=True, help=help)


# The commands that print a table; `evals leaderboard` adds Markdown (the README's table).
format_option = format_choice("table", "json", "csv", help="Print an aligned table, a JSON array or CSV.")
leaderboard_format_option = format_choice(
    "table",
    "json",
    "csv",
    "markdown",
    help="Print an aligned table, a JSON array, CSV, or Markdown tables (one per corpus, with intervals).",
)


def store_path(store: Path | None) -> tuple[Path, bool]:
    """The store path and whether its directory may be created (only for the default)."""
    return (DEFAULT_STORE, True) if store is None else (store, False)


def open_store(store: Path | None, *, read_only: bool = True) -> Store:
    path, create_parent = store_path(store)
    return store_api().Store.open(path, read_only=read_only, create_parent=create_parent)


HEARTBEAT_S = 60.0  # a run whose output is not a terminal says how far it is at least this often


class Heartbeat:
    """Progress for a run whose output is not a terminal (a log file, CI): every ``every`` seconds, from a
    daemon thread, one line on stderr saying what is done, out of what, and the time so far, until :meth:`stop`.
    ``say`` prints a line (default: click's echo on stderr)."""

    def __init__(self, every: float = HEARTBEAT_S, say: Callable[[str], None] | None = None) -> None:
        import threading
        import time

        self._clock = time.monotonic
        self.started = self._clock()
        self.every = every
        self.state: tuple[int, int, str] | None = None
        self._say = say or (lambda text: click.echo(text, err=True))
        self._stopped = threading.Event()
        threading.Thread(target=self._beat, name="evals-progress", daemon=True).start()

    # The labels a run's steps other than playing conversations report under (the embeddings computed up front,
    # the answers and the judge's verdicts); any other label is a conversation's id.
    STEPS = ("embeddings", "answers", "verdicts")

    def __call__(self, done: int, total: int, label: str) -> None:
        # Past the last item the step counts; the line stays true meanwhile.
        self.state = (done, total, label if label in self.STEPS else "conversations")

    def line(self) -> str:
        seconds = int(self._clock() - self.started)
        spent = (
            f"{seconds // 3600}h {seconds // 60 % 60:02d}m {seconds % 60:02d}s"
            if seconds >= 3600
            else f"{seconds // 60}m {seconds % 60:02d}s"
        )
        if self.state is None:
            return f"progress: no conversation done yet, {spent} so far"
        done, total, what = self.state
        return f"progress: {done}/{total} {what} done, {spent} so far"

    def _beat(self) -> None:
        while not self._stopped.wait(self.every):
            self._say(self.line())

    def stop(self) -> None:
        self._stopped.set()


def progress_reporter(heartbeat: bool = False) -> Callable[[int, int, str], None] | None:
    """Per-conversation progress on stderr when a person is watching; else, with ``heartbeat``, a
    :class:`Heartbeat` line at least once a minute (stop it when the run ends), and otherwise nothing."""
    if not sys.stderr.isatty():
        return Heartbeat() if heartbeat else None

    def report(done: int, total: int, conversation_id: str) -> None:
        end = "\n" if done == total else ""
        click.echo(f"\r\033[K[{done}/{total}] {printable(conversation_id)}", err=True, nl=False)
        if end:
            click.echo("", err=True)

    return report


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write via a temporary file and rename (:func:`evals.io.outputs.write_output`), so a crash never leaves half a file."""
    from evals.io.outputs import write_output

    write_output(path, dump_json(document))


def warn_about_the_key(config: RunConfig, api_key: str | None) -> None:
    """Say so on stderr, before any request, when the API key would travel unencrypted (to the
    chat endpoint, or to the embedding endpoint with --embedder openai)."""
    for warning in config.key_warnings(api_key):
        echo(f"warning: {warning}", err=True)


def echo_llm_usage(document: dict[str, Any]) -> None:
    answers = document["metrics"].get("answers")
    if answers is not None:
        echo(
            f"llm: {answers['requests_made']} requests made, {answers['requests_cached']} from cache; "
            f"{answers['prompt_tokens']} prompt + {answers['completion_tokens']} completion tokens",
            err=True,
        )
        from evals.views.tables import usage_lines

        for line in usage_lines(answers.get("usage") or {}, answers.get("correct") if answers["judge_model"] else None):
            echo(line, err=True)
        if answers.get("repeat_accuracies"):
            from evals.views.tables import repeats_line

            echo(repeats_line(answers["repeat_accuracies"]), err=True)


def errata_option(effect: str) -> Callable[[Callable], Callable]:
    """``--errata``: errata files (or suite files naming them), one per corpus; ``effect`` says what the
    command shows with them."""
    return click.option(
        "--errata",
        "errata_files",
        multiple=True,
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        metavar="FILE",
        help="An errata file (evals import-errata, docs/benchmarks.md), or a suite file whose [errata] table names "
        f"them: {effect}, never in its place. Repeatable, one file per corpus.",
    )


def max_unparsed_option(func: Callable) -> Callable:
    """``--max-unparsed``: the share of a run's judged verdicts that may be unparsed before the command fails."""
    return click.option(
        "--max-unparsed",
        "max_unparsed",
        type=Finite(0, 1),
        default=None,
        metavar="SHARE",
        help="Exit 1 when more than this share (0 to 1, e.g. 0.01) of a run's counted verdicts are unparsed (the judge's "
        "replies could not be read). The count is always shown; default: no limit.",
    )(func)


def prices_option(func: Callable) -> Callable:
    """``--prices``: a price table overriding the shipped one, model by model (evals.model.costs)."""
    return click.option(
        "--prices",
        "prices_file",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        metavar="FILE",
        help='A TOML file with a [prices] table ("MODEL" = {input = $, output = $} per 1M tokens, optional date and '
        "source) overriding the shipped prices (evals/model/prices.toml) model by model. "
        "A model without a price has no $ figure.",
    )(func)


def price_table(prices_file: Path | None) -> Any:
    """The shipped price table, overridden by ``prices_file``'s where given."""
    from evals.model.costs import load_prices, shipped_prices

    table = shipped_prices()
    return table.override(load_prices(prices_file)) if prices_file is not None else table


def option_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``--option KEY=VALUE`` pairs as a mapping; a key given twice is refused, never the last one taken."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        key = key.strip()
        if key in out:
            raise click.BadParameter(
                f"{key} is given twice ({key}={out[key]}, {key}={value}); give each option once", param_hint="--option"
            )
        out[key] = value
    return out


def echo_summaries(
    summaries: Sequence[RunSummary],
    fmt: str,
    before: Sequence[str],
    after: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    errata: Any = None,  # evals.analysis.errata.Figures: each run's headline with errata, beside the published one
    ranks: dict[str, int] | None = None,  # the leaderboard's: each memory's rank at its k (JSON's "rank", null for a ceiling)
    failures: Sequence[Any] = (),  # evals.store.FailedRun: rows saying "failed: <reason>", never a figure
    spread: dict[str, Any] | None = None,  # the leaderboard's: run id -> its configuration's repeated runs (JSON)
) -> None:
    from evals.views import tables

    if fmt == "json":
        click.echo(tables.summaries_json(summaries, errata, ranks, failures, spread))
    elif fmt == "csv":
        click.echo(tables.summaries_csv(summaries, errata, failures), nl=False)
    else:
        echo(tables.summary_table(summaries, before, after, metrics, errata, failures).text(), nl=False)


# -- the ``evals`` group -------------------------------------------------------------------


def _show_version(ctx: click.Context) -> None:
    """``evals --version``, as click's version option says it; the version is looked up only then (a package
    metadata lookup is a tenth of ``python -m evals``'s start-up)."""
    from evals import __version__

    click.echo(f"evals, version {__version__}")
    ctx.exit()


@click.group(cls=EvalsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _show_version(ctx) if value and not ctx.resilient_parsing else None,
    help="Show the version and exit.",
)
def cli() -> None:
    """Measure long-term memory for LLM agents.

    Plays labelled conversations (a corpus folder of *.json files) through a
    memory strategy and reports recall@k and token cost at every test point.
    Every run is appended to a results store (a DuckDB file) with its git
    commit, model and date.
    """
