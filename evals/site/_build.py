"""From the results store to files: the build loop over the registered publishers.

The build reads the store (opened read-only), gives every run to each
publisher's ``publish_run`` (in this process or in worker processes), then
calls each publisher's ``publish`` for the pages that span runs, and writes
everything into a fresh directory that replaces the output in one swap (see
:mod:`evals.site._output`).

Everything is sorted and nothing reads the clock: the same store gives a
byte-identical site.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from evals.cache import cache_path_for
from evals.site import _output
from evals.site._output import Output, SiteError
from evals.site._publisher import Publisher, Site, load_run
from evals.site._registry import PUBLISHERS
from evals.site._render import DEFAULT_TEMPLATES, make_environment
from evals.site._workers import Job, default_workers, render_in_workers
from evals.store import Store

__all__ = ["BuildReport", "SiteError", "build", "build_site"]


@dataclass(frozen=True)
class BuildReport:
    """What a build wrote."""

    out_dir: Path
    runs: int
    pages: int
    files: int
    bytes: int
    largest_page: str
    largest_page_bytes: int
    seconds: float


def _publish(store: Store, env: jinja2.Environment, output: Output, workers: int | None, job: Job) -> int:
    """Every publisher's files; returns the number of runs. ``job`` says what worker processes would need."""
    summaries = store.runs()
    latest = store.latest_per_configuration()
    site = Site.of(env, summaries, latest, job.publishers)
    site.references = {digest: store.references(digest) for digest in sorted({s.corpus_digest for s in latest})}
    site.latency = {s.run_id: store.latency_buckets(s.run_id) for s in latest}
    publishers = [cls() for cls in job.publishers]
    needed = set().union(*(p.runs_needed(site) for p in publishers))

    def site_pages() -> None:
        for run_id in sorted(needed - site.stored.keys()):
            site.stored[run_id] = load_run(store, site, run_id)
        for publisher in publishers:
            publisher.publish(site, output)

    workers = default_workers(len(summaries)) if workers is None else workers
    if workers <= 1:
        for run_id in sorted(s.run_id for s in summaries):
            stored = load_run(store, site, run_id)
            for publisher in publishers:
                publisher.publish_run(stored, site, output)
            if run_id in needed:  # kept, so site_pages need not read it again
                site.stored[run_id] = stored
            output.flush()
        site_pages()
    else:
        # Biggest runs first, so no worker is left with a long tail.
        order = [s.run_id for s in sorted(summaries, key=lambda s: (-s.context_tokens, s.run_id))]
        render_in_workers(dataclasses.replace(job, summaries=summaries, latest=latest), workers, order, output, site_pages)
    return len(summaries)


def build(
    store_path: Path,
    out_dir: Path,
    *,
    templates_dir: Path | None = None,
    workers: int | None = 1,
    publishers: Sequence[type[Publisher]] = PUBLISHERS,
) -> BuildReport:
    """:func:`build_site` with the page kinds given instead of the registered ones."""
    clock = time.perf_counter()
    templates_dir = (Path(templates_dir) if templates_dir is not None else DEFAULT_TEMPLATES).absolute()
    if not (templates_dir / "base.html").is_file():
        raise SiteError(f"no site templates in {templates_dir} (expected base.html there)")
    env = make_environment(templates_dir)
    store_path = Path(store_path).absolute()
    _output.refuse_to_hold(Path(out_dir), [store_path, cache_path_for(store_path)])
    building = _output.prepare(Path(out_dir))
    output = Output(building)
    try:
        with Store.open(store_path, read_only=True) as store:
            job = Job(store_path, templates_dir, building, summaries=[], latest=[], publishers=tuple(publishers))
            run_count = _publish(store, env, output, workers, job)
        _output.copy_static(templates_dir, output)
        _output.mark(output)
        output.files["data/results.duckdb"] = store_path.read_bytes()
        output.flush()
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    _output.swap(building, Path(out_dir))
    return BuildReport(
        out_dir=Path(out_dir),
        runs=run_count,
        pages=output.pages,
        files=output.written_files,
        bytes=output.written_bytes,
        largest_page=output.largest[1],
        largest_page_bytes=output.largest[0],
        seconds=time.perf_counter() - clock,
    )


def build_site(
    store_path: Path,
    out_dir: Path,
    *,
    templates_dir: Path | None = None,
    workers: int | None = 1,
) -> BuildReport:
    """Render the static site for the store at ``store_path`` into ``out_dir``.

    ``out_dir`` is replaced whole (it must be new, empty, or an earlier
    build's output). The store file itself is published as
    ``data/results.duckdb``, so the next CI run can restore and append to it.
    ``workers`` is the number of processes rendering runs: 1 (the default)
    renders in this process; ``None`` picks one per CPU, up to 4, for stores
    of 8 runs or more. Worker processes are spawned, so a script that asks
    for them must guard its entry point with ``if __name__ == "__main__":``
    (the ``evals`` command does).
    """
    return build(store_path, out_dir, templates_dir=templates_dir, workers=workers)
