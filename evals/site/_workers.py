"""Rendering the units of a build (a corpus's transcripts, a run's pages) here or in worker processes.

Units are independent, so spawned workers (each with its own read-only store
connection, templates and publishers) render them and write their files
straight into the build directory, while the build's own process makes the
pages that span runs. Only the counts, names and digests of what was written come back.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.analysis.errata import Figures
from evals.io.interrupts import is_interruption, shielded_children
from evals.site._corpus import TextsFile
from evals.site._layout import CorpusLayout
from evals.site._output import Output
from evals.site._publisher import Publisher, Site, corpus_source, run_source
from evals.site._render import make_environment
from evals.store import RunSummary, Store, outcomes_of, release_memory

__all__ = ["PARALLEL_FROM", "SERIAL_FROM_BYTES", "Job", "default_workers", "render_here", "render_in_workers", "render_unit"]

PARALLEL_FROM = 8  # units to render before the build uses worker processes
# A store bigger than this is rendered in one process: every process holds a slice of a run, the corpus
# layouts and a DuckDB buffer pool of its own (each held hundreds of MB of decompressed texts while the
# store kept a conversation's turns as one list value), and on two busy cores the second process saved
# little time (measured on a LongMemEval-sized store of the seven built-in strategies).
SERIAL_FROM_BYTES = 64_000_000

Result = tuple[tuple[int, int, int, tuple[int, str]], dict[str, str]]  # (counts, files written -> SHA-256)


@dataclass(frozen=True)
class Job:
    """What a worker process needs to render units on its own (pickled once per worker)."""

    store_path: Path
    templates_dir: Path
    root: Path  # the build directory
    summaries: list[RunSummary]
    latest: list[RunSummary]
    publishers: tuple[type[Publisher], ...]  # module-level classes, so they pickle by name
    conversations: dict[str, list[str]]
    layouts: dict[str, CorpusLayout]
    texts: dict[str, TextsFile]
    corpus_names: dict[str, str]
    store_href: str
    suspects: dict[str, Any] = field(default_factory=dict)  # corpus digest -> the label audit's flags (Site.suspects)
    errata: Figures | None = None  # the headline with errata of each run (evals.analysis.errata)


def render_unit(store: Store, site: Site, publishers: list[Publisher], names: dict[str, str], unit: str, output: Output) -> None:
    """Every publisher's files for one unit: ``corpus:<digest>`` or ``run:<run id>``."""
    kind, _, ident = unit.partition(":")
    if kind == "corpus":
        corpus = corpus_source(store, site, ident, names[ident])
        for publisher in publishers:
            publisher.publish_corpus(corpus, site, output)
    else:
        run = run_source(store, site, next(s for s in site.summaries if s.run_id == ident))
        for publisher in publishers:
            publisher.publish_run(run, site, output)
        whole = run.whole()
        if ident in site.wanted and whole is not None and run.summary.corpus_digest not in site.withheld:
            site.stored[ident] = outcomes_of(whole)  # read once: the pages that span runs take it from here
    output.flush()


_worker: tuple[Store, Site, list[Publisher], Job] | None = None


def _start(job: Job) -> None:
    global _worker
    store = Store.open(job.store_path, read_only=True)
    store.use_threads(1)
    atexit.register(store.close)
    site = Site.of(
        make_environment(job.templates_dir),
        job.summaries,
        job.latest,
        job.publishers,
        job.conversations,
        job.layouts,
        job.texts,
        job.store_href,
        job.suspects,
    )
    site.errata = job.errata
    _worker = (store, site, [cls() for cls in job.publishers], job)


def _render(unit: str) -> Result:
    """Render one unit in a worker process and write its files; return what was written, with digests."""
    assert _worker is not None
    store, site, publishers, job = _worker
    output = Output(job.root)
    render_unit(store, site, publishers, job.corpus_names, unit, output)
    release_memory()  # as render_here does
    return output.stats(), output.written


def default_workers(units: int, store_bytes: int = 0) -> int:
    """Worker processes for a build: one per CPU (at most 4); none for few units, where start-up would
    dominate, or for a big store, where memory would (:data:`SERIAL_FROM_BYTES`)."""
    if units < PARALLEL_FROM or store_bytes > SERIAL_FROM_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


def render_here(
    store: Store, site: Site, publishers: list[Publisher], job: Job, units: list[str], output: Output
) -> Iterator[tuple[str, dict[str, str]]]:
    """Render ``units`` in this process, one after the other; yields each unit with the files it wrote
    (path -> SHA-256)."""
    for unit in units:
        part = Output(job.root)
        render_unit(store, site, publishers, job.corpus_names, unit, part)
        # What the unit freed goes back to the system before the next (Arrow's allocator keeps it otherwise:
        # eight runs of a 100-question LongMemEval_m store peaked at 537 MiB without this, 507 with it).
        release_memory()
        output.add(part.stats())
        yield unit, part.written


def render_in_workers(
    job: Job, workers: int, units: list[str], output: Output, meanwhile: Callable[[], None]
) -> list[tuple[str, dict[str, str]]]:
    """Render ``units`` in ``workers`` processes, in that order, running ``meanwhile`` here; count their files into ``output``."""
    context = multiprocessing.get_context("spawn")
    done = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start, initargs=(job,)) as pool:
        with shielded_children():  # the workers are started by submit
            futures = [pool.submit(_render, unit) for unit in units]
        try:
            meanwhile()
            for unit, future in zip(units, futures, strict=True):
                stats, written = future.result()
                output.add(stats)
                done.append((unit, written))
        except BaseException as exc:
            if is_interruption(exc):
                # Ctrl-C: stop the workers now, not after the units they are rendering. The executor then
                # fails every future itself (one cancelled here would make its thread raise).
                for process in list(pool._processes.values()):  # the executor offers no public way
                    process.terminate()
            else:
                for future in futures:
                    future.cancel()
            raise
    return done
