"""Worker processes that render runs in parallel with the build's own process.

Runs are independent, so spawned workers (each with its own read-only store
connection, templates and publishers) render them and write their files
straight into the build directory, while the build's own process makes the
pages that span runs. Only the counts of what was written come back.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evals.site._output import Output
from evals.site._publisher import Publisher, Site, load_run
from evals.site._render import make_environment
from evals.store import RunSummary, Store

__all__ = ["PARALLEL_FROM", "Job", "default_workers", "render_in_workers"]

PARALLEL_FROM = 8  # runs in a store before the build uses worker processes


@dataclass(frozen=True)
class Job:
    """What a worker process needs to render runs on its own (pickled once per worker)."""

    store_path: Path
    templates_dir: Path
    root: Path  # the build directory
    summaries: list[RunSummary]
    latest: list[RunSummary]
    publishers: tuple[type[Publisher], ...]  # module-level classes, so they pickle by name


_worker: tuple[Store, Site, list[Publisher], Path] | None = None


def _start(job: Job) -> None:
    global _worker
    store = Store.open(job.store_path, read_only=True)
    atexit.register(store.close)
    site = Site.of(make_environment(job.templates_dir), job.summaries, job.latest, job.publishers)
    _worker = (store, site, [cls() for cls in job.publishers], job.root)


def _render(run_id: str) -> tuple[int, int, int, tuple[int, str]]:
    """Render one run's files in a worker process and write them; return what was written."""
    assert _worker is not None
    store, site, publishers, root = _worker
    output = Output(root)
    stored = load_run(store, site, run_id)
    for publisher in publishers:
        publisher.publish_run(stored, site, output)
    output.flush()
    return output.stats()


def default_workers(runs: int) -> int:
    """Worker processes for a build: one per CPU (at most 4), none for small stores where start-up would dominate."""
    return 1 if runs < PARALLEL_FROM else max(1, min(os.cpu_count() or 1, 4))


def render_in_workers(job: Job, workers: int, run_ids: list[str], output: Output, meanwhile: Callable[[], None]) -> None:
    """Render ``run_ids`` in ``workers`` processes, in that order, running ``meanwhile`` here; count their files into ``output``."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start, initargs=(job,)) as pool:
        futures = [pool.submit(_render, run_id) for run_id in run_ids]
        try:
            meanwhile()
            for future in futures:
                output.add(future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise
