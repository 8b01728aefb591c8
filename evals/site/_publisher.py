"""What a kind of page is to the build: a :class:`Publisher`, given the build's shared :class:`Site`.

As asv's ``OutputPublisher``: each page kind is a subclass in its own module,
listed in :mod:`evals.site._registry`. The build instantiates every listed
class once per build (and once per worker process), calls
:meth:`Publisher.publish_corpus` for every corpus runs use,
:meth:`Publisher.publish_run` for every run and :meth:`Publisher.publish` once,
and derives the site navigation from the publishers that declare a
``nav_label``. A new page kind touches neither the build loop nor
``base.html``.

Files made from one run, or one corpus, depend on nothing else (see
:mod:`evals.site._manifest`), so a later build reuses them as they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import jinja2

from evals.analysis.errata import Figures
from evals.benchmarks import LockEntry
from evals.judge.metrics import LatencyBucket
from evals.model.corpus import Reference
from evals.site._computed import Computed
from evals.site._corpus import TextsFile
from evals.site._layout import CorpusLayout
from evals.site._output import Output
from evals.site._pages import NavEntry, Page
from evals.site._views import store_note
from evals.site._withheld import points_without_text, run_without_text, withheld_corpora
from evals.store import RunSummary, Store, StoredRun
from evals.views.site_paths import Paths, config_id, root_of

__all__ = ["CorpusSource", "Publisher", "RunSource", "Site", "corpus_source", "navigation", "run_source"]

RUN_SLICE_TURNS = 20_000  # turns' worth of conversations a run is read in at a time (memory holds one slice)


@dataclass
class RunSource:
    """One run to publish: its summary, and its contents a slice of conversations at a time."""

    summary: RunSummary
    conversation_ids: list[str]  # every conversation of the run, in corpus order
    _parts: Callable[[], Iterator[StoredRun]] = field(repr=False)
    _kept: StoredRun | None = field(default=None, repr=False)  # the run, read once, when it is one slice

    def parts(self) -> Iterator[StoredRun]:
        """The run as slices of conversations, in corpus order (each a :class:`StoredRun`, the summary the whole run's).

        A run of one slice is read and assembled once, and kept for the next publisher of the unit; a longer
        one is read again by each (memory holds one slice, never the whole run)."""
        if self._kept is not None:
            return iter((self._kept,))
        return self._reading()

    def whole(self) -> StoredRun | None:
        """The whole run, if it was read in one slice and kept (after :meth:`parts` was read to the end)."""
        return self._kept

    def _reading(self) -> Iterator[StoredRun]:
        count, first = 0, None
        for part in self._parts():
            count += 1
            first = part if count == 1 else None
            yield part
        if count == 1:
            self._kept = first


@dataclass
class CorpusSource:
    """One corpus to publish: its layout, and its conversations streamed from the store."""

    digest: str
    name: str
    layout: CorpusLayout
    _conversations: Callable[[], Iterator[tuple[str, str, list[str], list[str], list[dict[str, Any]]]]] = field(repr=False)
    _sessions: Callable[[], dict[str, tuple[list[str | None] | None, list[str | None] | None]]] = field(
        repr=False, default=lambda: {}
    )

    def conversations(self) -> Iterator[tuple[str, str, list[str], list[str], list[dict[str, Any]]]]:
        """``(conversation_id, description, roles, contents, test_points)`` in corpus order (``Store.iter_conversations``)."""
        return self._conversations()

    def sessions(self) -> dict[str, tuple[list[str | None] | None, list[str | None] | None]]:
        """Each conversation's turns' sessions and dates (None where the corpus has none), without their texts."""
        return self._sessions()


@dataclass
class Site:
    """The build's shared inputs, the same for every publisher and in every worker process."""

    env: jinja2.Environment
    paths: Paths
    summaries: list[RunSummary]  # every run, newest first
    latest: list[RunSummary]  # the latest run of each configuration
    by_config: dict[tuple[str, str], list[RunSummary]]  # each configuration's runs, newest first
    note: str  # the footer's line about the store
    navigation: list[NavEntry]
    layouts: dict[str, CorpusLayout]  # by corpus digest: where each turn's text is shown (corpora with units to render)
    texts: dict[str, TextsFile]  # by corpus digest: the texts, read once per build (the same corpora)
    store_href: str  # the published store, "" when the site does not carry it
    stored: dict[str, StoredRun] = field(default_factory=dict)  # the runs publishers asked for in runs_needed
    # Those runs' ids, when known before the runs are rendered: a run rendered in this process leaves its outcomes
    # in ``stored`` (evals.store.outcomes_of), so the pages that span runs do not read it again.
    wanted: set[str] = field(default_factory=set)
    references: dict[str, list[Reference]] = field(default_factory=dict)  # corpus digest -> published figures
    latency: dict[str, list[LatencyBucket]] = field(default_factory=dict)  # latest run id -> retrieve latency by size
    # corpus digest -> the label audit's flags there (evals.site._suspects.CorpusSuspects), for every corpus shown
    suspects: dict[str, Any] = field(default_factory=dict)
    lock: dict[str, LockEntry] = field(default_factory=dict)  # the lock file's entries by URL (benchmark pages)
    errata: Figures | None = None  # each run's headline with errata (evals build-site --errata), by run id
    # latest run id -> the latest runs with the same top-k on >= 99% of test points (evals.analysis.same_ranking)
    same_ranking: dict[str, list[Any]] = field(default_factory=dict)
    computed: Computed = field(default_factory=Computed)  # this build's verdicts by run (evals.site._computed)
    # corpus digest -> why its benchmark's text is not shown (its licence; evals.site._withheld), for those withheld
    withheld: dict[str, str] = field(default_factory=dict)
    # Each configuration's failed latest attempt (evals.store.Store.latest_failures): the leaderboard's failed rows.
    failed: list[Any] = field(default_factory=list)

    def frame(self, title: str, nav: str = "", *, href: str = "", note: str | None = None) -> dict[str, Any]:
        """The fields every page has (:class:`Page`'s) for the page at ``href`` (one at the site root may leave it
        out). A page of one run or one corpus gives its own ``note`` and links no store: later builds reuse it as
        it is (evals/site/_manifest.py)."""
        own = note is not None
        return {
            "title": title,
            "root": root_of(href),
            "nav": nav,
            "store_note": note if own else self.note,
            "navigation": self.navigation,
            "store_href": "" if own else self.store_href,
        }

    @classmethod
    def of(
        cls,
        env: jinja2.Environment,
        summaries: list[RunSummary],
        latest: list[RunSummary],
        publishers: Iterable[type[Publisher]],
        conversations: dict[str, list[str]],
        layouts: dict[str, CorpusLayout] | None = None,
        texts: dict[str, TextsFile] | None = None,
        store_href: str = "",
        suspects: dict[str, Any] | None = None,
    ) -> Site:
        """``conversations``: each corpus's conversation ids, in corpus order, by digest."""
        by_config: dict[tuple[str, str], list[RunSummary]] = defaultdict(list)
        for summary in summaries:
            by_config[config_id(summary)].append(summary)
        paths = Paths(summaries)
        for digest, ids in conversations.items():
            paths.set_corpus(digest, ids)
        for summary in summaries:
            paths.set_conversations(summary.run_id, conversations[summary.corpus_digest])
        return cls(
            env=env,
            paths=paths,
            summaries=summaries,
            latest=latest,
            by_config=dict(by_config),
            note=store_note(summaries),
            navigation=navigation(publishers),
            layouts=layouts or {},
            texts=texts or {},
            store_href=store_href,
            suspects=suspects or {},
            withheld=withheld_corpora(summaries),
        )


class Publisher:
    """One kind of page: the files it writes, and its entry in the navigation if it has one.

    Subclasses set ``name`` (the ``nav`` their pages give) and ``pages`` (the
    page models they render), and override :meth:`publish_run` for files made
    from one run (it may run in a worker process, so it must only write to
    ``output``) or :meth:`publish` for files that span runs, or both.
    """

    name: ClassVar[str] = ""
    pages: ClassVar[tuple[type[Page], ...]] = ()
    nav_label: ClassVar[str | None] = None  # None: not in the navigation
    nav_href: ClassVar[str] = ""  # site-root-relative page the navigation entry links to
    nav_order: ClassVar[int] = 0  # entries are ordered by this, then by registry position

    def runs_needed(self, site: Site) -> set[str]:
        """Run ids whose outcomes (``Store.get_run_outcomes``: test points and hits, no texts) :meth:`publish`
        reads from ``site.stored``."""
        return set()

    def publish_corpus(self, corpus: CorpusSource, site: Site, output: Output) -> None:
        """Write this kind's files for one corpus (once per corpus, whatever runs use it)."""

    def publish_run(self, run: RunSource, site: Site, output: Output) -> None:
        """Write this kind's files for one run; they must depend on that run alone (and the corpus it is on)."""

    def publish(self, site: Site, output: Output) -> None:
        """Write this kind's files that span runs; every ``runs_needed`` run is in ``site.stored``."""


def navigation(publishers: Iterable[type[Publisher]]) -> list[NavEntry]:
    """The site navigation: every publisher with a ``nav_label``, by ``nav_order``."""
    listed = sorted(enumerate(publishers), key=lambda ip: (ip[1].nav_order, ip[0]))
    return [NavEntry(p.name, p.nav_label, p.nav_href) for _, p in listed if p.nav_label is not None]


def run_source(store: Store, site: Site, summary: RunSummary) -> RunSource:
    """A run to publish, read from ``store`` (its texts from the build's texts file) a slice at a time."""
    digest = summary.corpus_digest
    ids = list(site.layouts[digest].conversations)
    texts = site.texts[digest]

    def parts() -> Iterator[StoredRun]:
        found = store.iter_run(summary.run_id, batch_turns=RUN_SLICE_TURNS, contents=texts.contents)
        return map(run_without_text, found) if digest in site.withheld else found

    return RunSource(summary, ids, parts)


def corpus_source(store: Store, site: Site, digest: str, name: str) -> CorpusSource:
    """A corpus to publish: its texts from the build's texts file, its test points from ``store``."""
    texts = site.texts[digest]

    def conversations() -> Iterator[tuple[str, str, list[str], list[str], list[dict[str, Any]]]]:
        points = store.corpus_test_points(digest)
        withheld = digest in site.withheld
        for row in texts.rows():
            cid = row["conversation_id"]
            if withheld:  # the benchmark's ids, never its text (evals.site._withheld)
                yield cid, row["description"], row["roles"], [""] * len(row["contents"]), points_without_text(points.get(cid, []))
            else:
                yield cid, row["description"], row["roles"], row["contents"], points.get(cid, [])

    def sessions() -> dict[str, tuple[list[str | None] | None, list[str | None] | None]]:
        return {row["conversation_id"]: (row["sessions"], row["dates"]) for row in store.conversation_shapes(digest)}

    return CorpusSource(digest, name, site.layouts[digest], conversations, sessions)
