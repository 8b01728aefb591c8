"""The page base every page model extends, and the pieces several page kinds share.

A page model is a dataclass: what its template may use, and nothing else. Each
page kind's models live in its own module, beside its publisher
(``evals/site/_run.py`` holds ``RunPage`` and its rows, ``_drilldown.py`` the
drill-down's, ...); this module holds :class:`Page` (the fields ``base.html``
uses), the navigation entry, and the models pages of more than one kind show
(a configuration, a run's header, a metric column and cell, a benchmark, the
figure with errata, a transcript line and its marks). ``tests/project/test_docs.py``
checks that each model here is shared and each other lives with its kind.

Each page class names its template. A page is rendered with its fields as the
top-level template variables (``root``, ``title``, ``rows``…), so a test can
check that a template refers only to the fields its model declares, and Jinja's
``StrictUndefined`` fails the build if a template reaches for anything else.

Every link a model carries is relative to the site root (``runs/abc.html``);
templates put the page's ``root`` (``""``, ``"../"``, ``"../../"``) in front,
so the site works from ``file://`` and under any URL prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from evals.site._text import Segment
from evals.views.tables import Caveat

__all__ = [
    "BenchmarkInfo",
    "ConfigInfo",
    "ErrataView",
    "MetricCell",
    "MetricColumn",
    "NavEntry",
    "Page",
    "RunHeader",
    "TurnLine",
    "TurnMark",
]


@dataclass(frozen=True)
class NavEntry:
    """One link of the site navigation; the build derives the list from its publishers."""

    key: str  # the publisher's name, which its pages give as ``nav``
    label: str
    href: str


@dataclass(frozen=True)
class Page:
    """Fields every page has; ``base.html`` uses exactly these."""

    template: ClassVar[str] = ""

    title: str
    root: str  # relative path from this page back to the site root: "", "../", "../../"
    nav: str  # the active navigation entry's key ("leaderboard", "history", …); "" for none
    store_note: str  # footer: how many runs the site was built from and the newest run's time (pages of one run: that run)
    navigation: list[NavEntry]  # every navigation entry, in order
    # The published store (site-root relative), linked from the footer; "" when the site does not carry it, and
    # on pages of one run or one corpus, which later builds reuse as they are (see evals/site/_manifest.py).
    store_href: str


@dataclass(frozen=True)
class ConfigInfo:
    """One configuration on one corpus: the unit the leaderboard and history follow."""

    strategy: str
    settings: str  # the strategy's configuration other than its name, "key=value, …"
    config_key: str
    model: str
    k: int
    corpus_name: str
    corpus_digest_short: str
    history_href: str
    caveats: list[Caveat] = field(default_factory=list)  # of its latest run (evals.views.tables.caveats): ceiling, hash embedder


@dataclass(frozen=True)
class RunHeader:
    """The few facts about a run that head its drill-down pages."""

    run_id: str
    href: str
    strategy: str
    settings: str
    model: str
    k: int
    commit_short: str
    dirty: bool
    date: str
    corpus_name: str
    approx_tokens: bool  # tokens were estimated (~4 characters per token), not counted
    # What to know before reading its figures (evals.views.tables.caveats: ceiling, hash embedder); every page that
    # heads with the run shows them with p.caveats(run.caveats).
    caveats: list[Caveat] = field(default_factory=list)


@dataclass(frozen=True)
class MetricColumn:
    """A declared metric (evals.judge.metrics) as a leaderboard column."""

    name: str
    label: str
    description: str
    kind: str  # proportion, mean, tokens, count or seconds
    higher_is_better: bool
    integral: bool = False  # a largest count (records or tokens held): a whole number, shown without decimals
    extra: bool = False  # on the leaderboard, behind the "every column" toggle (not in the default set)


@dataclass(frozen=True)
class MetricCell:
    """One run's value of one metric column."""

    present: bool  # False: the run has no such value (not measured, or stored before it was): "—"
    value: float | None  # None with present: measured without data (no test point): "—" too, never 0
    low: float | None = None  # 95% interval: Wilson for proportions, bootstrap for means that have one
    high: float | None = None
    approx: bool = False  # tokens estimated at ~4 characters per token
    n: int | None = None  # observations the value is over


@dataclass(frozen=True)
class ErrataView:
    """A run's headline with errata (evals.analysis.errata): a second figure beside the published one, never in its place."""

    label: str  # "recall_any@k with errata"
    recall: float | None  # None: not computed (``problem`` says why)
    low: float | None
    high: float | None
    hits: int
    total: int
    corrected: int  # test points of the run the errata name
    excluded: int  # ... of which left out as invalid
    changed: int  # verdicts that differ from the published ones
    note: str  # the errata's source, file name and SHA-256
    problem: str = ""


@dataclass(frozen=True)
class BenchmarkInfo:
    """A benchmark as the site lists it: its corpora, and what the registry (evals.benchmarks) says of it."""

    key: str  # evals.views.site_paths.benchmark_key
    title: str
    href: str  # its leaderboard
    known: bool  # in the registry (fetched by name); else imported by hand, or a corpus of its own
    license: str  # "" when not known
    non_commercial: bool
    homepage: str
    source: str  # where its data file is published ("" when not known)
    version: str
    pin: str  # how its data file is pinned, in words ("" when not known)
    trust_on_first_use: bool  # pinned by the lock file's record of the first download, not a published digest
    evidence: str  # the labels it carries
    note: str  # how a corpus not in the registry came to be shown here
    corpora: list[tuple[str, str, str]]  # (name, digest short, anchor), newest run first
    suspects: int  # test points the label audit flags
    checked: int  # test points it could check
    suspects_href: str
    runs: int  # runs in the store on its corpora
    configurations: int  # configurations on its leaderboard


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class TurnMark:
    """A tag on a transcript turn, tying it to one test point."""

    kind: str  # "retrieved" (with its rank), "answer" (holds an expected keyword), "evidence" or "asked" (the test point's turn)
    number: int  # the test point's number
    anchor: str  # the test point's section id on this page ("tp-14")
    rank: int | None  # for "retrieved"
    hit: bool  # for "asked": whether that test point was a hit
    label: str  # the tag's text: "TP1 #3", "TP1 answer", "TP1 asked"
    css: str  # the tag's extra classes: "", " ans", " ask", " ask miss"


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class TurnLine:
    """One turn of a transcript (a conversation's, a passage's) or of a drill-down's list of the turns its test points touched."""

    turn: int  # its number in the list: the turn's index (a passage's turns: their offset in it)
    anchor: str  # the line's id: "t-<turn>" (a passage's turns: "p-<offset>")
    role: str
    text: str  # the turn's text, shown as is when ``segments`` is empty
    segments: list[Segment]  # the text with keywords marked, where this turn holds a test point's answer
    marks: list[TurnMark]  # in test point order
    css: str  # classes: "role-<role>" plus "retrieved", "evidence", "asked" as the marks say
    html: str  # this line as the ``turn_line`` macro in _partials.html renders it (once per distinct line)
    tail: list[Segment] = field(default_factory=list)  # a clipped turn's end (``segments`` is then its start)
    omitted: int = 0  # characters left out between start and end (0: the turn is shown whole)
    length: int = 0  # characters of the whole turn
    full_href: str = ""  # a clipped turn's whole text, as a plain-text file (relative to the page)
    href: str = ""  # in a drill-down, where the whole turn is (relative to the page); its text is then a snippet
