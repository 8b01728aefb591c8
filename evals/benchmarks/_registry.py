"""The benchmarks this harness knows by name: one :class:`Unit` per benchmark, and its releases.

A unit (``evals/benchmarks/NAME/``, or one module) holds everything the harness knows of one benchmark:
its releases (:class:`Benchmark`: where each is published, at which version, under which license, with
which pins), its importer, its headline rule, its categories, its protocols, how the label audit knows
its files, and its page title. Units are registered as the entry points of the group
``mneme_evals.benchmarks``, read by the one plug-in loader (:mod:`evals.io.plugins`, which also imports a unit
named by reference, ``package.module:ATTR``), the built-ins in this package's ``pyproject.toml`` as a plug-in's
would be in its own. Each is checked field by field when registered (:mod:`._validate`), and a built-in's name,
of a unit or of a protocol, stays the built-in's; everything else (``evals benchmarks``, the CLI's
choices, the corpus schema, the methodology page, the front page, exports) derives from them.

Facts only, gathered from the benchmarks' own repositories and hub pages. A file whose host publishes
no digest (the Hugging Face hub files) has ``sha256=None`` here: its size and digest are recorded in the
lock file at its first download (trust on first use, :mod:`evals.benchmarks._lock`), and every later
fetch must match them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from evals.errors import EvalsError
from evals.io import plugins
from evals.judge.answer_scores import HARNESS_LEXICAL, Lexical
from evals.judge.headline import Rule

if TYPE_CHECKING:
    from evals.benchmarks.kit.importing import ImportReport, Source
    from evals.model.claims import Claim
    from evals.model.corpus import Corpus

RAW_GITHUB = "https://raw.githubusercontent.com"
# Evidence labels become each test point's evidence turns and sessions, so every retrieval metric applies.
TURN_LABELS = "turns and sessions"


class UnknownBenchmark(EvalsError):
    """A name that is not in the registry."""


@dataclass(frozen=True)
class RemoteFile:
    """One published data file. ``name`` is its published file name, which a mirror serves it by
    (``aliases``: other names a local copy commonly has, tried on a mirror after ``name``)."""

    name: str
    url: str
    sha256: str | None = None  # None: no published digest; pinned by the lock file on first download
    size: int | None = None  # bytes, pinned with the digest
    listed_size: str = ""  # the size as the host lists it, shown before the first download
    aliases: tuple[str, ...] = ()
    # The file's git blob id at the pinned commit, for a file of a git repository whose bytes were not at
    # hand when the pins were made (sha256 None): the download is checked against it, and its size and
    # SHA-256 are then recorded in the lock file.
    git_blob: str | None = None


@dataclass(frozen=True)
class SourceFile:
    """A file of a benchmark's repository at a pinned commit: an evaluation script whose templates a
    judge protocol reads. Stored in the downloads folder at ``sources/OWNER/REPO/COMMIT/PATH``, so
    that folder is the root of the repository's tree at that commit, and a mirror serves it at the same
    relative path (``OWNER/REPO/COMMIT/PATH``, as raw.githubusercontent.com lays it out)."""

    repo: str  # owner/name on GitHub
    commit: str
    path: str
    sha256: str

    @property
    def relative(self) -> str:
        return f"{self.repo}/{self.commit}/{self.path}"

    @property
    def url(self) -> str:
        return f"{RAW_GITHUB}/{self.relative}"


@dataclass(frozen=True)
class Benchmark:
    name: str  # what `evals fetch NAME` and a suite's `benchmarks` call it
    title: str
    homepage: str
    version: str  # the commit or hub revision the files are taken at
    license: str
    non_commercial: bool
    test_points: str  # as published
    evidence: str  # which labels it carries, so which metrics it supports
    data: RemoteFile | None
    importer: str | None  # the unit whose importer reads it (its name); None: not importable yet
    not_importable: str = ""  # why, when importer is None
    sources: tuple[SourceFile, ...] = field(default=())
    # A release published as a tree of files rather than one (BEAM): each file at its path under the
    # release's download folder, which the importer reads as one folder (``import_root`` in it).
    tree: tuple[RemoteFile, ...] = field(default=())
    import_root: str = ""

    @property
    def source(self) -> str:
        return self.data.url if self.data is not None else self.homepage

    @property
    def size(self) -> str:
        """Its size in words: pinned bytes, else as the host lists it; a tree's pinned files summed."""
        if self.tree:
            known = [f.size for f in self.tree if f.size is not None]
            rest = len(self.tree) - len(known)
            more = f" and {rest} more of a size recorded at their first download" if rest else ""
            return f"{sum(known):,} bytes in {len(known)} files{more}"
        if self.data is None:
            return "—"
        return f"{self.data.size:,} bytes" if self.data.size else self.data.listed_size or "—"

    @property
    def metrics(self) -> str:
        if self.importer is None:
            return "—"
        return "recall@k, turn and session recall/NDCG" if "turn" in self.evidence else "recall@k"


@dataclass(frozen=True)
class Audit:
    """How ``evals audit-labels --source FILE`` knows a unit's published file, and reads its evidence ids."""

    source: str  # the file in words, for the error naming what --source takes
    sniff: Callable[[Any], bool]  # given the file's first element (a top-level array's), or None
    dangling: Callable[[Source, Corpus], list[Any]]  # the audit's Flags: evidence ids naming no turn


@dataclass(frozen=True)
class ErrataFormat:
    """A published answer-key audit of a unit's benchmark that `evals import-errata FORMAT SOURCE` reads: its own
    words for the command's help, the benchmark file its corrections are resolved in, and its converter, imported
    when used."""

    help: str  # one line, or a few: what SOURCE is, for the FORMAT list of `evals import-errata --help`
    corrects: str  # what one entry corrects, in words ("one LoCoMo test point")
    option: str  # the option naming the benchmark file the audit audited (``--locomo``)
    option_help: str
    default: str  # that file's place under SOURCE where the option is not given
    # (source, benchmark file, commit or None, error kinds left out) -> the report (``.document``, ``.summary()``).
    convert: Callable[[Path, Path, str | None, frozenset[str]], Any]


@dataclass(frozen=True)
class ProtocolSpec:
    """One QA protocol a unit brings, declared without importing it: ``--protocol``'s choices, a run's allowed
    values, its default judge and its lexical scores are known from this alone; the class is imported when a run
    uses it."""

    # A function importing the protocol's class lazily: a :class:`evals.benchmarks.kit.Protocol` with a static
    # ``extract(sources) -> templates`` (the templates it reads out of its pinned files; given None where it pins
    # none and holds its templates itself).
    load: Callable[[], type]
    judge: str | None  # the judge model its published code uses; None: it scores answers itself, no judge
    sources: tuple[SourceFile, ...] = ()  # the pinned files it reads its templates from
    # How it scores an answer's words against the gold (its F1 and BLEU-1); None: the harness's own.
    lexical: Lexical | None = None
    profile: str = ""  # which published scoring its figures follow, where a benchmark has several (shown with them)
    scores: str = ""  # without a judge: what it scores answers by, in words (`evals probe-judge` says "no judge (...)")


@dataclass(frozen=True)
class Unit:
    """One benchmark, whole: what ``benchmark.json`` calls it, its releases, importer, rule, categories,
    protocols, audit and titles. ``releases`` are what ``evals fetch NAME`` knows; a unit with an
    importer is a format of ``evals import-corpus``."""

    name: str  # what a corpus's benchmark.json declares, and the import-corpus FORMAT
    title: str  # as the site names it where a corpus was imported by hand
    releases: tuple[Benchmark, ...]
    importer: Callable[[Path, Path], ImportReport] | None = None
    reads: str = ""  # what the importer reads, one line for `evals import-corpus --help`
    rule: Rule | None = None  # the headline of a corpus declaring it; None: the harness's evidence rule
    categories: Mapping[str, str] = field(default_factory=dict)  # category key -> its name, as published
    # Set where its categories are numbers whose names are this harness's reading (LoCoMo's): the note shown
    # beside them, and they are shown by number first.
    category_note: str = ""
    # The QA protocols it brings (`evals run --protocol NAME`), by name: each one's class, pins, judge and scorer.
    protocols: Mapping[str, ProtocolSpec] = field(default_factory=dict)
    audit: Audit | None = None
    # How every page and the terminal name a turn (evals.benchmarks.turn_ids): (turn index, its session key or
    # None, its place in that session from 1) -> the benchmark's own id for it. None: the harness's naming.
    turn_name: Callable[[int, str | None, int], str] | None = None
    # The figures published for it (evals.model.claims.claims_in: its folder's claims.toml), read on first use.
    claims: Callable[[], list[Claim]] | None = None
    # What a declared metric is on this benchmark or under its protocols, by the metric's name (a retrieval metric's
    # family, e.g. "recall_frac", for every level and cutoff): one sentence each, shown after the metric's description.
    metric_notes: Mapping[str, str] = field(default_factory=dict)
    # The answer-key audits of it whose corrections `evals import-errata FORMAT` turns into an errata file, by FORMAT.
    errata: Mapping[str, ErrataFormat] = field(default_factory=dict)
    order: int = 100  # where `evals benchmarks` lists it: lower first, then by name


@dataclass
class _Registered:
    """The units as last loaded from the registered set ``key``: each unit and where it comes from, the protocols
    they bring (a name is its first claimant's: the harness's, then the built-ins', then plug-ins' by name), and
    every published claim, read on first use."""

    key: tuple[tuple[str, str, str], ...]
    units: dict[str, Unit]
    sources: dict[str, str]
    protocols: dict[str, ProtocolSpec]
    claims: tuple[tuple[EntryPoint, ...], list[Claim]] | None = None  # the claims entry points read, and every claim


_registered = _Registered((), {}, {}, {})
# Units named by a reference (``package.module:ATTR``) in this process, by the reference: the module, and the unit,
# registered beside the entry points' while that module stays imported (a reference is how a unit that is not
# installed is used, as a strategy's is).
_referenced: dict[str, tuple[str, Unit]] = {}


def _named(point: EntryPoint) -> str:
    """The entry point and where it comes from, as a warning names them: ``NAME (DISTRIBUTION VERSION)``."""
    from evals.model.formatting import printable

    where = "built-in" if plugins.is_built_in(point) else point.value if point.dist is None else plugins.source_of(point)
    return printable(f"{point.name} ({where})")


def _problems(name: str, loaded: Any) -> list[str]:
    """Why a loaded entry point (or reference) is no usable unit, one line each ([]: it is one)."""
    from evals.benchmarks._validate import unit_problems
    from evals.judge.metrics import declared

    if not isinstance(loaded, Unit):
        return [f"it is {type(loaded).__name__}, not a Unit"]
    problems = unit_problems(loaded)
    if problems:
        return problems
    if loaded.name != name:
        return [f"its Unit is named {loaded.name!r}, not {name!r}"]
    if loaded.rule is not None and declared(loaded.rule.metric) is None:
        return [f"its rule names no declared metric: {loaded.rule.metric!r}"]
    return []


def _left_out(named: str, problems: list[str]) -> None:
    from evals.model.formatting import printable

    if len(problems) == 1:
        _warn(f"benchmark {named} is left out: {printable(problems[0])}")
    else:
        _warn(f"benchmark {named} is left out: its fields are not valid:")
        for problem in problems:
            _warn(f"benchmark {named}: {printable(problem)}")


def _load(points: list[EntryPoint]) -> tuple[dict[str, Unit], dict[str, str]]:
    """Each entry point's unit, by name, and where each comes from; one that fails to load, is misnamed, has a
    bad field, declares an unknown metric or takes a built-in's name gets one warning line on stderr (one per
    bad field) and is left out, so it breaks only itself."""
    from evals.strategies.registry import PLUGIN_FAULTS, fault_text

    found: dict[str, Unit] = {}
    sources: dict[str, str] = {}
    builtin = {point.name for point in points if plugins.is_built_in(point)}
    for point in sorted(points, key=lambda p: (not plugins.is_built_in(p), p.name, p.value)):
        if point.name in builtin and not plugins.is_built_in(point):
            _warn(f"benchmark {_named(point)} is ignored: a built-in benchmark has that name")
            continue
        if point.name in found:
            continue  # one name, one unit: the first registered keeps it
        try:
            loaded = point.load()
        except PLUGIN_FAULTS as exc:  # fault_text raises a KeyboardInterrupt again
            _warn(f"benchmark {_named(point)} failed to load: {fault_text(exc)}")
            continue
        problems = _problems(point.name, loaded)
        if problems:
            _left_out(_named(point), problems)
            continue
        found[point.name] = loaded
        sources[point.name] = plugins.source_of(point)
    for ref, (_, referenced) in _referenced.items():
        if referenced.name in found:
            _warn(f"benchmark {ref} is ignored: a registered benchmark is named {referenced.name!r}")
            continue
        found[referenced.name], sources[referenced.name] = referenced, ref
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0]))), sources


def _protocols(found: dict[str, Unit], sources: dict[str, str]) -> dict[str, ProtocolSpec]:
    """Every unit's protocols by name, in the units' order. A name is the harness's, then the built-ins', then
    plug-ins' in name order: a later unit declaring a taken name keeps its other protocols, and gets a warning."""
    taken: dict[str, str] = {}
    for name in sorted(found, key=lambda n: (sources[n] != "built-in", n)):
        for protocol in found[name].protocols:
            if protocol == HARNESS or protocol in taken:
                owner = "the harness's own" if protocol == HARNESS else f"benchmark {taken[protocol]}'s"
                if sources[name] != "built-in" or protocol != HARNESS:
                    _warn(f"benchmark {name} ({sources[name]}): its protocol {protocol!r} is ignored: the name is {owner}")
                continue
            taken[protocol] = name
    return {p: spec for name, u in found.items() for p, spec in u.protocols.items() if taken.get(p) == name}


def _warn(line: str) -> None:
    sys.stderr.write(f"warning: {line}\n")


# The entry points last read, their distinct points and the registered set's key: a distribution's name is read
# from its metadata file at each access, so they are keyed once per reading of the entry points.
_keyed: tuple[tuple[EntryPoint, ...], list[EntryPoint], tuple[tuple[str, str, str], ...]] = ((), [], ())


def _current() -> _Registered:
    """The registered units, loaded again only when the registered set changes."""
    global _registered, _keyed
    found = plugins.group(plugins.BENCHMARK_GROUP)
    if found is not _keyed[0]:
        distinct = {(p.name, p.value, p.dist.name if p.dist else ""): p for p in found}
        _keyed = (found, list(distinct.values()), tuple(sorted(distinct)))
    _, points, key = _keyed
    for ref in [ref for ref, (module, _) in _referenced.items() if module not in sys.modules]:
        del _referenced[ref]
    key = (*key, *((ref, "", "reference") for ref in _referenced))
    if key != _registered.key:
        loaded, sources = _load(points)
        _registered = _Registered(key, loaded, sources, _protocols(loaded, sources))
    return _registered


def units() -> dict[str, Unit]:
    """Every registered unit that loads, by name, in name order; loaded again only when the registered set changes."""
    return dict(_current().units)


def unit(name: str) -> Unit:
    """The unit ``name`` (what a benchmark.json declares), or the one a reference ``package.module:ATTR`` names (it
    is registered from then on, in this process); an UnknownBenchmark error lists the names there are."""
    found = units()
    if name not in found and plugins.is_reference(name):
        return _reference(name)
    if name not in found:
        raise UnknownBenchmark(
            f"no benchmark unit called {name!r}; registered: {', '.join(found)} (or name one as package.module:ATTR)"
        )
    return found[name]


def _reference(ref: str) -> Unit:
    from evals.strategies.registry import PLUGIN_FAULTS, fault_text

    if ref not in _referenced:
        try:
            loaded, module = plugins.load_reference(ref, f"benchmark {ref}")
        except plugins.PluginError:
            raise
        except PLUGIN_FAULTS as exc:
            raise UnknownBenchmark(f"benchmark {ref}: cannot import it: {fault_text(exc)}") from None
        problems = _problems(getattr(loaded, "name", ""), loaded)
        if problems:
            raise UnknownBenchmark(f"benchmark {ref} is no usable unit: " + "; ".join(problems))
        _referenced[ref] = (module, loaded)
    found = _current()
    name = _referenced[ref][1].name
    if found.units.get(name) is not _referenced[ref][1]:
        raise UnknownBenchmark(f"benchmark {ref}: a registered benchmark is named {name!r}")
    return found.units[name]


def published_claims() -> list[Claim]:
    """Every published claim: each unit's own, then each claims file a plug-in names for a benchmark
    (``mneme_evals.claims``), read once per registered set. A unit's claims that cannot be read, or that name
    another benchmark, are left out with one warning; every other board is as it was."""
    found = _current()
    points = plugins.group(plugins.CLAIMS_GROUP)
    if found.claims is None or found.claims[0] is not points:
        from evals.benchmarks._claims import gather

        found.claims = (points, gather(found.units, found.sources, points, _warn))
    return list(found.claims[1])


def rule_of(declared: str | None) -> Rule | None:
    """The headline rule of a corpus declaring ``declared`` (None: it declares none, or its unit has no rule)."""
    if declared is None:
        return None
    found = units().get(declared)
    return None if found is None else found.rule


class _Releases(MutableMapping[str, Benchmark]):
    """Every unit's releases by name, as the units declare them now. A name set here (a test's stand-in
    pins) is held over the units' own until it is deleted again."""

    def __init__(self) -> None:
        self._set: dict[str, Benchmark] = {}

    def _declared(self) -> dict[str, Benchmark]:
        return {release.name: release for u in units().values() for release in u.releases}

    def __getitem__(self, name: str) -> Benchmark:
        if name in self._set:
            return self._set[name]
        return self._declared()[name]

    def __setitem__(self, name: str, value: Benchmark) -> None:
        self._set[name] = value

    def __delitem__(self, name: str) -> None:
        del self._set[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self._declared(), **self._set})

    def __len__(self) -> int:
        return len({**self._declared(), **self._set})


BENCHMARKS: MutableMapping[str, Benchmark] = _Releases()


# The harness's own protocol (evals.benchmarks.protocols.harness): built in, first, whatever units are installed.
HARNESS = "harness"
HARNESS_JUDGE = "gpt-4o-mini"


def protocol_specs() -> dict[str, ProtocolSpec]:
    """Every unit's protocols by name, in the units' order (the harness's own is not among them); a name a
    built-in brings is the built-in's, whatever a plug-in declares."""
    return dict(_current().protocols)


def protocol_names() -> tuple[str, ...]:
    """The names ``--protocol`` takes and a run may record: the harness's own, then every unit's."""
    return (HARNESS, *protocol_specs())


def protocol_judges() -> dict[str, str | None]:
    """The judge model each protocol's published code uses, by name (None: it has no judge)."""
    return {HARNESS: HARNESS_JUDGE, **{name: spec.judge for name, spec in protocol_specs().items()}}


def protocol_sources() -> dict[str, tuple[SourceFile, ...]]:
    """The files each published protocol reads its templates from, as the units declare them."""
    return {name: spec.sources for name, spec in protocol_specs().items()}


def known_protocol(name: str) -> str:
    """``name``, checked to be a registered protocol's (a pydantic validator: the error lists the names)."""
    if name == HARNESS:  # the harness's own is built in: no unit is loaded to know it (every plain run names it)
        return name
    from pydantic_core import PydanticCustomError

    names = protocol_names()
    if name not in names:
        listed = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}" if len(names) > 1 else repr(names[0])
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": listed})
    return name


# A protocol's name as a run's settings and an exchange file hold it: any registered protocol's.
ProtocolName = Annotated[str, AfterValidator(known_protocol)]


def no_judge_refusal(grader: str) -> str:
    """What `--judge` beside protocol ``grader``, which scores answers itself (no judge), is told: the one
    message, naming the protocols that have a judge."""
    judged = [name for name, judge in protocol_judges().items() if judge is not None]
    named = ", ".join(judged[:-1]) + f" or {judged[-1]}" if len(judged) > 1 else "".join(judged)
    return (
        f"--protocol {grader} scores answers by its own rule and has no judge, so --judge has nothing to do; "
        f"to judge its answers, add --judge-protocol {named}"
    )


def protocol_class(name: str) -> type | None:
    """The class of protocol ``name`` where a unit brings it, imported now; else None. A load that fails is the
    unit's fault: one line naming the protocol and where its unit comes from."""
    from evals.strategies.registry import PLUGIN_FAULTS, fault_text

    found = _current()
    spec = found.protocols.get(name)
    if spec is None:
        return None
    try:
        kind = spec.load()
    except PLUGIN_FAULTS as exc:  # fault_text raises a KeyboardInterrupt again
        owner = next((n for n, u in found.units.items() if u.protocols.get(name) is spec), "?")
        raise EvalsError(
            f"protocol {name} (benchmark {owner}, {found.sources.get(owner, '?')}) failed to load: {fault_text(exc)}"
        ) from None
    if not isinstance(kind, type):
        raise EvalsError(f"protocol {name}: its load() returned {type(kind).__name__}, not a Protocol class")
    return kind


def protocol_lexical(name: str | None) -> Lexical:
    """How protocol ``name`` scores an answer's words: its unit's scorer, else the harness's (its own protocol, or
    one no installed unit brings any more: a stored run of an uninstalled plug-in is read as before)."""
    if name is None or name == HARNESS:  # no unit is loaded to know the harness's own (every plain run's)
        return HARNESS_LEXICAL
    spec = protocol_specs().get(name)
    return spec.lexical if spec is not None and spec.lexical is not None else HARNESS_LEXICAL


def category_names(benchmark: str | None) -> Mapping[int, str] | None:
    """The names of a benchmark's numbered categories (a unit with a ``category_note``), or None: its categories
    are names already (or it is no installed unit)."""
    found = units().get(benchmark or "")
    if found is None or not found.category_note:
        return None
    return {int(key): name for key, name in found.categories.items()}


def metric_description(name: str, description: str) -> str:
    """Metric ``name``'s ``description`` as every surface shows it: followed by what each unit notes of it on its
    benchmark (:attr:`Unit.metric_notes`), in the units' order."""
    from evals.judge.metrics import parse_retrieval_key

    parsed = parse_retrieval_key(name)
    keys = {name} if parsed is None else {name, parsed[0]}
    notes = [note for u in units().values() for key, note in u.metric_notes.items() if key in keys]
    return " ".join((description, *notes))


def errata_formats() -> dict[str, ErrataFormat]:
    """Every unit's answer-key audit formats (`evals import-errata FORMAT`), by name, in the units' order."""
    return {name: spec for u in units().values() for name, spec in u.errata.items()}


def category_notes() -> tuple[str, ...]:
    """The notes of every unit whose categories are numbers, in the units' order."""
    return tuple(u.category_note for u in units().values() if u.category_note)


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; an UnknownBenchmark error lists the names there are."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UnknownBenchmark(f"no benchmark called {name!r}; `evals benchmarks` lists them: {', '.join(BENCHMARKS)}") from None


# -- whose text a published page may show ---------------------------------------------------------------------

# The licences under which a benchmark's text (its turns, questions and answer keys) may be shown on the published
# board: each allows redistribution with attribution, CC BY-NC for non-commercial use (the board is non-commercial).
# A licence is read by how its text begins ("CC BY-NC 4.0 (non-commercial)"); no licence, or any other, withholds.
REDISTRIBUTABLE = ("CC BY", "CC BY-SA", "CC BY-NC", "MIT", "Apache-2.0")
_LICENCE = re.compile(r"(CC BY(?:-SA|-NC)?|MIT|Apache-2\.0)(?:\s+\d+\.\d+)?(?![-\w.])")


def redistributable(license: str) -> bool:
    """Whether a release's declared ``license`` lets a page show its text (:data:`REDISTRIBUTABLE`)."""
    found = _LICENCE.match(license.strip())
    return found is not None and found.group(1) in REDISTRIBUTABLE


def text_withheld(name: str | None) -> str:
    """Why a page may not show the text of the corpus that declares benchmark ``name``: "" where it may (a corpus
    declaring no benchmark is its user's own, or the project's starter corpus), else one sentence naming the licence
    that withholds it. A unit's text is shown only where every release it publishes allows it."""
    if not name:
        return ""
    try:
        found = unit(name)
    except EvalsError:
        return f"{name} is no registered benchmark, so its licence is unknown: its text is not shown here"
    for release in found.releases:
        if not redistributable(release.license):
            return (
                f"{found.title}'s licence, “{release.license}”, does not allow its text to be published, so its turns go "
                f"by {found.title}'s own ids; `evals fetch {release.name}` brings the text to read locally"
            )
    if not found.releases:
        return f"{found.title} declares no licence: its text is not shown here"
    return ""
