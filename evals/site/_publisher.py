"""What a kind of page is to the build: a :class:`Publisher`, given the build's shared :class:`Site`.

As asv's ``OutputPublisher``: each page kind is a subclass in its own module,
listed in :mod:`evals.site._registry`. The build instantiates every listed
class once per build (and once per worker process), calls
:meth:`Publisher.publish_run` for every run and :meth:`Publisher.publish` once,
and derives the site navigation from the publishers that declare a
``nav_label``. A new page kind touches neither the build loop nor
``base.html``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import jinja2

from evals.site._output import Output
from evals.site._pages import NavEntry, Page
from evals.site_paths import Paths, config_id
from evals.site._views import store_note
from evals.corpus import Reference
from evals.metrics import LatencyBucket
from evals.store import RunSummary, Store, StoredRun

__all__ = ["Publisher", "Site", "load_run", "navigation"]


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
    stored: dict[str, StoredRun] = field(default_factory=dict)  # the runs publishers asked for in runs_needed
    references: dict[str, list[Reference]] = field(default_factory=dict)  # corpus digest -> published figures
    latency: dict[str, list[LatencyBucket]] = field(default_factory=dict)  # latest run id -> retrieve latency by size

    @classmethod
    def of(
        cls, env: jinja2.Environment, summaries: list[RunSummary], latest: list[RunSummary], publishers: Iterable[type[Publisher]]
    ) -> Site:
        by_config: dict[tuple[str, str], list[RunSummary]] = defaultdict(list)
        for summary in summaries:
            by_config[config_id(summary)].append(summary)
        return cls(
            env=env,
            paths=Paths(summaries),
            summaries=summaries,
            latest=latest,
            by_config=dict(by_config),
            note=store_note(summaries),
            navigation=navigation(publishers),
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
        """Run ids whose full stored form :meth:`publish` reads from ``site.stored``.

        Only these runs' drill-down paths (``site.paths.conversation``) are
        known to :meth:`publish` when runs render in worker processes.
        """
        return set()

    def publish_run(self, stored: StoredRun, site: Site, output: Output) -> None:
        """Write this kind's files for one run."""

    def publish(self, site: Site, output: Output) -> None:
        """Write this kind's files that span runs; every ``runs_needed`` run is in ``site.stored``."""


def navigation(publishers: Iterable[type[Publisher]]) -> list[NavEntry]:
    """The site navigation: every publisher with a ``nav_label``, by ``nav_order``."""
    listed = sorted(enumerate(publishers), key=lambda ip: (ip[1].nav_order, ip[0]))
    return [NavEntry(p.name, p.nav_label, p.nav_href) for _, p in listed if p.nav_label is not None]


def load_run(store: Store, site: Site, run_id: str) -> StoredRun:
    """A run as stored; its drill-downs get their file names here, before any page links to them."""
    stored = store.get_run(run_id)
    site.paths.set_conversations(run_id, [c.conversation_id for c in stored.run.conversations])
    return stored
