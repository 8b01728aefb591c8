"""From the results store to files: the build loop over the registered publishers.

The build reads the store (opened read-only) and works out, per corpus, where
each turn's text is shown (:mod:`evals.site._layout`) and which test points the
label audit flags (:mod:`evals.site._suspects`). It then renders the
*units* that an earlier build in the same output did not already make from the
same inputs (:mod:`evals.site._manifest`): each corpus's transcripts
(``publish_corpus``) and each run's pages (``publish_run``), in this process
or in worker processes; the files of the other units are linked from the old
output once each is found intact (:mod:`evals.site._reuse`). Then each
publisher's ``publish`` makes the pages that span runs, and everything lands
in a fresh directory that replaces the output in one swap (see
:mod:`evals.site._output`).

Everything is sorted and nothing reads the clock: the same store gives a
byte-identical site, whether built afresh or over an earlier build.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.benchmarks import Lock, LockEntry
from evals.io.cache import cache_path_for
from evals.site import _corpus, _manifest, _output, _reuse, _suspects
from evals.site._computed import Computed
from evals.site._output import MARKER, Collision, Output, SiteError
from evals.site._publisher import Publisher, Site
from evals.site._registry import PUBLISHERS
from evals.site._render import DEFAULT_TEMPLATES, make_environment
from evals.site._run import JSON_LIMIT
from evals.site._withheld import run_without_text
from evals.site._workers import SERIAL_FROM_BYTES, Job, default_workers, render_here, render_in_workers
from evals.store import CorpusConflict, RunSummary, Store
from evals.views.names import row_name
from evals.views.site_paths import Paths, config_id

__all__ = ["STORE_COPY_LIMIT", "WARN_SITE_BYTES", "BuildReport", "SiteError", "build", "build_site", "build_site_from"]

STORE_HREF = "data/results.duckdb"
# The store is copied into the site (for the next CI run to restore and append to) up to this size;
# a bigger one (a LongMemEval-sized corpus with several runs is hundreds of MB) would outweigh the site.
STORE_COPY_LIMIT = 25_000_000
# GitHub Pages publishes a site of at most 1 GB; past this the build warns and names the largest parts.
WARN_SITE_BYTES = 800_000_000
REFUSED_FILE_BYTES = 100_000_000  # GitHub refuses files over 100 MB
STORE_COPY = ("auto", "always", "never")
# A store bigger than this has its corpora's texts read in a process of its own (see evals.site._corpus),
# so the memory that reading takes is given back before rendering starts.
READ_APART_BYTES = SERIAL_FROM_BYTES
TEXTS_DIR = ".evals-texts"  # in the build directory while building; removed before the swap


@dataclass(frozen=True)
class BuildReport:
    """What a build made: the site as it now is, and how much of it this build rendered."""

    out_dir: Path
    runs: int
    pages: int  # HTML pages in the site
    files: int  # files in the site
    bytes: int  # the site's size
    largest_page: str
    largest_page_bytes: int
    seconds: float
    rendered: int = 0  # units (a corpus's transcripts, a run's pages) rendered by this build
    reused: int = 0  # units whose files an earlier build made from the same inputs, linked as they were
    parts: list[tuple[str, int]] = field(default_factory=list)  # the site by run, corpus and store copy, biggest first
    warnings: list[str] = field(default_factory=list)


def _corpus_names(summaries: list[RunSummary]) -> dict[str, str]:
    """Each corpus's name as its oldest run gave it: a name that later runs do not change."""
    names: dict[str, str] = {}
    for summary in reversed(summaries):  # oldest first
        names.setdefault(summary.corpus_digest, summary.corpus_name)
    return names


def _fingerprints(site: Site, renderer: str, names: dict[str, str], references: dict[str, list]) -> dict[str, str]:
    """Each unit's fingerprint: what its files are made from besides the (immutable) run or corpus itself."""
    navigation = [(e.key, e.label, e.href) for e in site.navigation]
    prints = {
        f"corpus:{digest}": _manifest.fingerprint(
            renderer,
            "corpus",
            {"digest": digest, "name": names[digest], "navigation": navigation, "withheld": site.withheld.get(digest, "")},
        )
        for digest in sorted(names)
    }
    for s in site.summaries:
        inputs = {
            "summary": s.as_dict(),
            "run_href": site.paths.run(s.run_id),
            "history_href": site.paths.history(*config_id(s)),
            "drilldowns": site.paths.conversations(s.run_id),
            "navigation": navigation,
            "json_limit": JSON_LIMIT,
            "withheld": site.withheld.get(s.corpus_digest, ""),  # its licence's verdict on showing the text
            # A later run can bring the corpus other published figures, which run pages show.
            "references": [r.model_dump(mode="json") for r in references[s.corpus_digest]],
        }
        if site.errata is not None and (figure := site.errata.of(s.run_id)) is not None:
            inputs["errata"] = figure.as_dict()  # the run page shows it
        prints[f"run:{s.run_id}"] = _manifest.fingerprint(renderer, "run", inputs)
    return prints


def _order(units: list[str], summaries: list[RunSummary]) -> list[str]:
    """Biggest first, so no worker is left with a long tail: corpora, then runs by retrieved tokens."""
    tokens = {f"run:{s.run_id}": s.context_tokens for s in summaries}
    return sorted(units, key=lambda u: (not u.startswith("corpus:"), -tokens.get(u, 0), u))


def build(
    store_path: Path,
    out_dir: Path,
    *,
    templates_dir: Path | None = None,
    workers: int | None = 1,
    publishers: Sequence[type[Publisher]] = PUBLISHERS,
    incremental: bool = True,
    store_copy: str = "auto",
    lock: Path | None = None,
    errata: Sequence[Path] = (),
    computed: Computed | None = None,
) -> BuildReport:
    """:func:`build_site` with the page kinds given instead of the registered ones. ``computed``: where the build
    keeps what it computes of each run (a fresh one by default; one per build, see :mod:`evals.site._computed`)."""
    clock = time.perf_counter()
    if store_copy not in STORE_COPY:
        raise SiteError(f"store_copy must be one of {', '.join(STORE_COPY)}, not {store_copy!r}")
    templates_dir = (Path(templates_dir) if templates_dir is not None else DEFAULT_TEMPLATES).absolute()
    if not (templates_dir / "base.html").is_file():
        raise SiteError(f"no site templates in {templates_dir} (expected base.html there)")
    store_path = Path(store_path).absolute()
    out = Path(out_dir).absolute()
    _output.refuse_to_hold(Path(out_dir), [store_path, cache_path_for(store_path)])
    previous, problem = _manifest.load(out) if incremental and (out / MARKER).is_file() else ({}, "")
    warnings = [problem] if problem else []
    entries = tuple(sorted(Lock.read(lock).entries.items())) if lock is not None else ()
    job = _Build(
        store_path, out, templates_dir, tuple(publishers), workers, store_copy, tuple(errata), entries,
        computed if computed is not None else Computed(),
    )  # fmt: skip
    try:
        made = job.run(previous, warnings)
    except Collision as exc:
        if not previous:
            raise
        # Only a manifest edited to list a file the build writes itself (a page spanning runs, another
        # unit's file) gets here; the reused files were checked, so the manifest is what lied.
        warnings = [
            f"ignored {out / _manifest.MANIFEST} (it lists {exc.path}, which this build writes itself) "
            "and rendered every run and corpus again"
        ]
        made = job.run({}, warnings)
    summaries, paths, rendered, reused = made
    size = _measure(out, paths, {s.run_id: s for s in summaries})
    warnings += size.warnings
    return BuildReport(
        out_dir=Path(out_dir),
        runs=len(summaries),
        pages=size.pages,
        files=size.files,
        bytes=size.bytes,
        largest_page=size.largest_page[1],
        largest_page_bytes=size.largest_page[0],
        seconds=time.perf_counter() - clock,
        rendered=rendered,
        reused=reused,
        parts=size.parts,
        warnings=warnings,
    )


@dataclass(frozen=True)
class _Build:
    """One build's settings; :meth:`run` makes the site, reusing what ``previous`` lists and is still intact."""

    store_path: Path
    out: Path
    templates_dir: Path
    publishers: tuple[type[Publisher], ...]
    workers: int | None
    store_copy: str
    errata: tuple[Path, ...] = ()  # errata files (or suite files naming them): a second headline with errata
    lock: tuple[tuple[str, LockEntry], ...] = ()  # the lock file's entries (URL, entry), shown on benchmark pages
    computed: Computed = field(default_factory=Computed)  # what the build computes of each run, once

    def run(self, previous: dict[str, _manifest.ManifestEntry], warnings: list[str]) -> tuple[list[RunSummary], Paths, int, int]:
        """Build into a fresh folder beside the output and swap it in; returns the runs, their paths, and
        how many units were rendered and reused. Adds to ``warnings``."""
        store_path, out, templates_dir, publishers = self.store_path, self.out, self.templates_dir, self.publishers
        env = make_environment(templates_dir)
        building = _output.prepare(out)
        output = Output(building)
        try:
            with Store.open(store_path, read_only=True) as store:
                store.use_threads(1)  # the build's queries are small, but for the texts, where threads cost memory
                summaries = store.runs()
                names = _corpus_names(summaries)
                conversations = {digest: store.conversation_ids(digest) for digest in sorted(names)}
                store_bytes = store_path.stat().st_size
                copy = self.store_copy == "always" or (self.store_copy == "auto" and store_bytes <= STORE_COPY_LIMIT)
                if self.store_copy == "auto" and not copy:
                    warnings.append(
                        f"the store is {store_bytes / 1e6:.0f} MB, over {STORE_COPY_LIMIT / 1e6:.0f} MB, "
                        "so the site does not carry "
                        f"a copy ({STORE_HREF}); a workflow that restores the store from the published site needs it kept "
                        "elsewhere, or --store-copy always"
                    )
                latest = store.latest_per_configuration()
                site = Site.of(env, summaries, latest, publishers, conversations, store_href=STORE_HREF if copy else "")
                site.computed = self.computed
                site.failed = store.latest_failures()
                if self.errata:
                    from evals.analysis.errata import errata_figures

                    site.errata = errata_figures(store, self.errata, summaries)
                site.references = {digest: store.references(digest) for digest in sorted({s.corpus_digest for s in latest})}
                site.latency = {s.run_id: store.latency_buckets(s.run_id) for s in latest}
                from evals.analysis.same_ranking import same_rankings

                site.same_ranking = same_rankings(store, latest)
                references = {digest: store.references(digest) for digest in sorted(names)}
                prints = _fingerprints(site, _manifest.renderer_digest(templates_dir, publishers), names, references)
                units, todo = _reuse_units(prints, previous, out, building, warnings)
                todo = _order(todo, summaries)
                digest_of = {f"run:{s.run_id}": s.corpus_digest for s in summaries}
                read = {key.removeprefix("corpus:") if key.startswith("corpus:") else digest_of[key] for key in todo}
                # The label audit's flags: a corpus whose pages are all reused has them in its reused files;
                # any other corpus's texts are read anyway, and the audit runs over them.
                for digest in sorted(names.keys() - read):
                    found = _suspects.load(building, digest)
                    if found is None:
                        read.add(digest)
                    else:
                        site.suspects[digest] = found
                if read:
                    (building / TEXTS_DIR).mkdir()
                    apart = store_bytes > READ_APART_BYTES
                    prepared = (_corpus.prepare if apart else _corpus.prepare_here)(
                        store_path, sorted(read), building / TEXTS_DIR
                    )
                    site.texts = {digest: texts for digest, (texts, _) in prepared.items()}
                    site.layouts = {digest: layout for digest, (_, layout) in prepared.items()}
                    del prepared
                    for digest in sorted(read - site.suspects.keys()):
                        found = _suspects.audit_stored(store, digest, names[digest], site.texts[digest])
                        site.suspects[digest] = _suspects.without_text(found) if digest in site.withheld else found
                site.lock = dict(self.lock)
                job = Job(
                    store_path,
                    templates_dir,
                    building,
                    summaries,
                    site.latest,
                    publishers,
                    conversations,
                    site.layouts,
                    site.texts,
                    names,
                    site.store_href,
                    site.suspects,
                    site.errata,
                )
                made = [cls() for cls in publishers]
                site.wanted = set().union(*(p.runs_needed(site) for p in made))

                def site_pages() -> None:
                    needed = set().union(*(p.runs_needed(site) for p in made))
                    for run_id in sorted(needed - site.stored.keys()):
                        stored = store.get_run_outcomes(run_id)
                        withheld = stored.summary.corpus_digest in site.withheld
                        site.stored[run_id] = run_without_text(stored) if withheld else stored
                    for publisher in made:
                        publisher.publish(site, output)
                    output.flush()

                count = default_workers(len(todo), store_bytes) if self.workers is None else self.workers
                if count <= 1 or len(todo) <= 1:
                    done = list(render_here(store, site, made, job, todo, output))
                    site_pages()
                else:
                    done = render_in_workers(job, min(count, len(todo)), todo, output, site_pages)
                for key, written in done:
                    units[key] = _manifest.ManifestEntry(prints[key], dict(sorted(written.items())))
                if copy:  # while the store is open for reading: no append can land between the pages and the copy
                    with _output.new_file(building, STORE_HREF) as writer:
                        store.copy_into(writer)
            shutil.rmtree(building / TEXTS_DIR, ignore_errors=True)
            _output.copy_static(templates_dir, output)
            _output.mark(output)
            output.raw(_manifest.MANIFEST, _manifest.dump(units))
            output.flush()
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        _output.swap(building, out)
        return summaries, site.paths, len(todo), len(prints) - len(todo)


def _reuse_units(
    prints: dict[str, str], previous: dict[str, _manifest.ManifestEntry], out: Path, building: Path, warnings: list[str]
) -> tuple[dict[str, _manifest.ManifestEntry], list[str]]:
    """The units of the earlier build that are made from the same inputs and whose files are still as it
    wrote them, linked into ``building``; and the units to render. Files that are not (edited, missing,
    a symbolic link) are named in one warning, since someone or something changed the old site."""
    units: dict[str, _manifest.ManifestEntry] = {}
    todo: list[str] = []
    problems: list[str] = []
    for key, value in prints.items():
        old = previous.get(key)
        if old is None or old.fingerprint != value:
            todo.append(key)
            continue
        problem = _reuse.link_unit(out, building, old.files)
        if problem:
            todo.append(key)
            problems.append(problem)
        else:
            units[key] = old
    if problems:
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        warnings.append(
            f"rendered {len(problems)} of the last build's runs and corpora again instead of reusing their files: "
            + "; ".join(problems[:3])
            + more
        )
    return units, todo


@dataclass
class _Size:
    pages: int = 0
    files: int = 0
    bytes: int = 0
    largest_page: tuple[int, str] = (0, "")
    parts: list[tuple[str, int]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _measure(root: Path, paths: Paths, runs: dict[str, RunSummary]) -> _Size:
    """The site's size, its biggest parts (a run's pages and JSON, a corpus's transcripts, the store
    copy), and warnings when it nears what GitHub Pages publishes."""
    by_slug = {slug: runs[run_id] for run_id, slug in paths.run_slug.items()}
    size = _Size()
    parts: dict[str, int] = {}
    big: list[str] = []
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            rel = path.relative_to(root).as_posix()
            length = path.stat().st_size
            size.files += 1
            size.bytes += length
            if rel.endswith(".html"):
                size.pages += 1
                size.largest_page = max(size.largest_page, (length, rel))
            if length > REFUSED_FILE_BYTES:
                big.append(f"{rel} ({_mb(length)})")
            parts[_part(rel, by_slug)] = parts.get(_part(rel, by_slug), 0) + length
    size.parts = sorted(parts.items(), key=lambda item: (-item[1], item[0]))
    if size.bytes > WARN_SITE_BYTES:
        largest = "; ".join(f"{name} {_mb(length)}" for name, length in size.parts[:5])
        size.warnings.append(
            f"the site is {_mb(size.bytes)}, past {_mb(WARN_SITE_BYTES)} (GitHub Pages publishes at most 1 GB); "
            f"largest parts: {largest}"
        )
    if big:
        size.warnings.append(f"GitHub refuses files over {_mb(REFUSED_FILE_BYTES)}: {', '.join(big)}")
    return size


def _part(rel: str, by_slug: dict[str, RunSummary]) -> str:
    """What a site file belongs to, for the size report."""
    parts = rel.split("/")
    if parts[0] == "runs" and len(parts) > 1:
        slug = parts[1].removesuffix(".json.gz").removesuffix(".data.js").removesuffix(".html")
        summary = by_slug.get(slug)
        return f"run {slug} ({row_name(summary)})" if summary else f"runs/{slug}"
    if parts[0] == "transcripts" and len(parts) > 1:
        return f"transcripts of corpus {parts[1]}"
    if rel == STORE_HREF:
        return f"the store copy ({STORE_HREF})"
    return parts[0] if len(parts) > 1 else "pages and downloads at the top"


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size < 10_000_000 else f"{size / 1e6:.0f} MB"


def build_site(
    store_path: Path,
    out_dir: Path,
    *,
    templates_dir: Path | None = None,
    workers: int | None = 1,
    incremental: bool = True,
    store_copy: str = "auto",
    lock: Path | None = None,
    errata: Sequence[Path] = (),
) -> BuildReport:
    """Render the static site for the store at ``store_path`` into ``out_dir``.

    ``out_dir`` is replaced whole (it must be new, empty, or an earlier
    build's output). An earlier build's files for runs and corpora whose
    inputs have not changed are reused (linked, not rendered again) unless
    ``incremental`` is False, each only if it is still a regular file inside
    ``out_dir`` with the content the earlier build recorded; the result is
    byte-identical either way. A file found changed, or a manifest that
    cannot be trusted, is a warning in the report, never an error.
    The store file itself is published as ``data/results.duckdb``, so the
    next CI run can restore and append to it, while it is at most
    :data:`STORE_COPY_LIMIT` bytes (``store_copy="auto"``; ``"always"`` or
    ``"never"`` decide it regardless). ``workers`` is the number of processes
    rendering: 1 (the default) renders in this process; ``None`` picks one
    per CPU, up to 4, once there are 8 units or more to render from a store
    of at most 64 MB (a bigger one renders in one process, for memory). Worker
    processes are spawned, and so is the one that reads a big store's texts
    (see :mod:`evals.site._corpus`), so a script that asks for workers or
    builds from a store over 64 MB must guard its entry point with
    ``if __name__ == "__main__":`` (the ``evals`` command does). ``lock``: the benchmarks' lock file
    (:mod:`evals.benchmarks._lock`), whose recorded sizes and digests the benchmark pages show beside the
    files pinned by trust on first use; a missing file is an empty lock. ``errata``: errata files (or suite
    files naming them, :func:`evals.analysis.errata.errata_files`) whose corpora's runs get a headline with errata
    beside the published one, on the leaderboard and the run pages.
    """
    return build(
        store_path,
        out_dir,
        templates_dir=templates_dir,
        workers=workers,
        incremental=incremental,
        store_copy=store_copy,
        lock=lock,
        errata=errata,
    )


def build_site_from(
    folder: Path,
    out_dir: Path,
    *,
    store_path: Path | None = None,
    corpus: Path | None = None,
    downloads: Path | None = None,
    **options: Any,
) -> BuildReport:
    """:func:`build_site` from the board files under ``folder`` (docs/board.md): each read as `evals import` reads
    it (its corpus found by digest among `evals fetch`'s ``downloads``, else ``corpus``; every figure recomputed
    and held to the file's), all of them into a temporary store (a copy of ``store_path``'s runs first, when
    given), which is built as usual. Every file is read before anything is written: a bad one is an error naming it, and nothing
    is built. ``options`` are :func:`build_site`'s."""
    from evals.errors import EvalsError
    from evals.views.board_files import read_board
    from evals.views.board_verify import board_files

    files = board_files(Path(folder))
    if not files:
        raise EvalsError(f"{folder}: no board files (*.json) under it")
    records = [read_board(path, corpus, downloads) for path in files]
    with tempfile.TemporaryDirectory(prefix="evals-board-") as scratch:
        temporary = Path(scratch) / "board.duckdb"
        if store_path is not None:
            with Store.open(store_path, read_only=True):  # a store this evals reads, at its schema
                pass
            shutil.copyfile(store_path, temporary)
            if Path(f"{store_path}.wal").is_file():  # what DuckDB has not checkpointed yet
                shutil.copyfile(f"{store_path}.wal", f"{temporary}.wal")
        with Store.open(temporary) as store:
            try:
                store.write_records(records)
            except CorpusConflict as exc:
                source = next(path for path, record in zip(files, records, strict=True) if record.summary.run_id == exc.run_id)
                raise EvalsError(f"{source}: {exc}") from None
        return build_site(temporary, out_dir, **options)
