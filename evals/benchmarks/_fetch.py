"""`evals fetch NAME`: a known benchmark's file, checked, its evaluation sources, and its corpus.

The downloads folder (default ``$XDG_CACHE_HOME/mneme-evals``, else ``~/.cache/mneme-evals``) holds::

    <benchmark>/<published file name>        the data file, as published
    <benchmark>/<owner>/<repo>/<commit>/<path>  each file of a release published as a tree (BEAM)
    sources/<owner>/<repo>/<commit>/<path>   evaluation sources at their pinned commit
    corpora/<benchmark>/                     the imported corpus (unless --corpus-out names another)

A copy already there is checked against its pin and reused; one that does not match is downloaded
again (and replaced only once the new bytes match). The corpus folder gets a ``.fetched`` note naming
the file it was imported from, so a later fetch of the same bytes reuses it, and a folder holding
anything else is never overwritten.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from evals.benchmarks._download import (
    Pin,
    Progress,
    download,
    exclusive,
    file_digest,
    made_dirs,
    mirror_locations,
    remove_made,
    shown,
    terminated_cleanly,
)
from evals.benchmarks._lock import Lock, LockEntry
from evals.benchmarks._registry import Benchmark, RemoteFile, SourceFile, benchmark
from evals.benchmarks.formats import ImportReport, import_corpus
from evals.errors import EvalsError
from evals.io.jsonfile import MAX_BENCHMARK_FILE_BYTES

__all__ = [
    "DOWNLOADS_ENV",
    "FETCHED_NOTE",
    "Fetched",
    "Status",
    "corpus_folder",
    "default_downloads",
    "fetch",
    "status",
]

DOWNLOADS_ENV = "EVALS_DOWNLOADS"
FETCHED_NOTE = ".fetched"  # in the corpus folder; not *.json, so never read as a conversation
MAX_SOURCE_BYTES = 16 * 1024**2  # an evaluation script

Log = Callable[[str], None]


def default_downloads() -> Path:
    """``$XDG_CACHE_HOME/mneme-evals`` (an absolute $XDG_CACHE_HOME only, as the XDG spec says), else ``~/.cache/mneme-evals``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "mneme-evals"


def corpus_folder(bench: Benchmark, downloads: Path) -> Path:
    """Where ``evals fetch`` imports ``bench`` by default: its folder's name is the corpus's name on the site."""
    return Path(downloads) / "corpora" / bench.name


def _data_path(bench: Benchmark, downloads: Path) -> Path:
    assert bench.data is not None
    return Path(downloads) / bench.name / bench.data.name


@dataclass(frozen=True)
class Status:
    """What `evals benchmarks` shows of one benchmark here: no digest is computed, so listing is quick."""

    fetched: str  # "yes", "no", or why a file there does not count
    trust: str  # "pinned", "locked on first use …", "first download will be recorded", or "—"
    corpus: Path | None  # an imported corpus in the default place


def _trust(bench: Benchmark, lock: Lock) -> tuple[Pin | None, str]:
    if bench.data is None:
        return None, "—"
    if bench.data.sha256 is not None:
        return Pin(bench.data.size, bench.data.sha256), f"pinned: {bench.data.size} bytes, sha256 {bench.data.sha256}"
    entry = lock.get(bench.data.url)
    if entry is not None:
        return Pin(entry.size, entry.sha256), f"locked on first use ({entry.recorded[:10]}, {lock.path})"
    return Pin(None, None), "not pinned: the first download is recorded in the lock (trust on first use)"


def status(bench: Benchmark, downloads: Path, lock: Lock) -> Status:
    if bench.tree:
        return _tree_status(bench, downloads, lock)
    pin, trust = _trust(bench, lock)
    if bench.data is None:
        return Status("—", trust, None)
    path = _data_path(bench, downloads)
    if not path.is_file():
        fetched = "no"
    elif pin is not None and pin.size is not None and path.stat().st_size != pin.size:
        fetched = "a copy of another size (fetch again)"
    else:
        fetched = "yes"
    folder = corpus_folder(bench, downloads)
    return Status(fetched, trust, folder if (folder / FETCHED_NOTE).is_file() else None)


@dataclass
class Fetched:
    benchmark: Benchmark
    file: Path
    size: int
    sha256: str
    trust: str
    downloaded: bool  # False: the copy in the downloads folder matched and was kept
    sources: list[Path] = field(default_factory=list)
    corpus: Path | None = None
    report: ImportReport | None = None  # None: the corpus was imported before, from the same bytes
    digest_of: str = "sha256"  # what ``sha256`` is the digest of, in words


def fetch(
    name: str,
    *,
    downloads: Path,
    lock_path: Path,
    corpus_out: Path | None = None,
    log: Log | None = None,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> Fetched:
    """Download (or reuse) benchmark ``name``'s file and evaluation sources, checked, and import its corpus.

    A file published without a digest is recorded in the lock (trust on first use) only once it is
    downloaded, checked and imported; a first download that fails its import, or whose entry cannot be
    written, is not kept. SIGTERM cleans up as Ctrl-C does. ``deadline`` is each download's, in seconds."""
    bench = benchmark(name)
    if bench.importer is None:
        raise EvalsError(f"{bench.name} is not importable yet: {bench.not_importable}")
    if bench.data is None and not bench.tree:
        raise EvalsError(
            f"{bench.name} pins no published file to fetch (its release declares neither data nor a tree); "
            f"import a copy you have with `evals import-corpus {bench.importer} FILE`"
        )
    say = log or (lambda _text: None)
    downloads = Path(downloads)
    lock = Lock.read(lock_path)
    if bench.tree:
        return _fetch_tree(bench, downloads, lock, corpus_out, say, progress)
    pin, trust = _trust(bench, lock)
    assert pin is not None
    if pin.sha256 is None and not Path(os.path.realpath(lock.path)).parent.is_dir():  # refused before downloading
        raise EvalsError(
            f"lock file {lock.path}: its folder does not exist; the first download of {bench.data.name} is recorded there"
        )
    with terminated_cleanly():
        return _fetch(bench, downloads, lock, pin, trust, corpus_out, say, progress, deadline)


def _fetch(
    bench: Benchmark,
    downloads: Path,
    lock: Lock,
    pin: Pin,
    trust: str,
    corpus_out: Path | None,
    say: Log,
    progress: Progress | None,
    deadline: float | None,
) -> Fetched:
    assert bench.data is not None
    target = _data_path(bench, downloads)
    size = sha256 = None
    origin = ""
    if target.is_file():
        size, sha256 = file_digest(target)
        if pin.sha256 is not None and (size, sha256) != (pin.size, pin.sha256):
            say(f"{target}: the copy here does not match its pin; downloading it again")
            size = sha256 = None
        elif pin.sha256 is None:
            origin = f"the copy already in {target.parent}"
    downloaded = size is None
    made: list[Path] = []
    if downloaded:
        locations = mirror_locations([bench.data.name, *bench.data.aliases]) or [bench.data.url]
        listed = f" ({bench.data.listed_size})" if bench.data.listed_size else ""
        say(f"downloading {bench.data.name} from {shown(locations[0])}{listed}")
        made = made_dirs(target.parent)
        try:
            size, sha256, origin = download(
                locations, target, pin, limit=MAX_BENCHMARK_FILE_BYTES, progress=progress, deadline=deadline
            )
        except BaseException:
            remove_made(made)
            raise
    assert size is not None and sha256 is not None
    fetched = Fetched(bench, target, size, sha256, trust, downloaded)
    out = Path(corpus_out or corpus_folder(bench, downloads))
    if out.is_symlink():  # a link to a folder: the corpus goes where it points, and the link stays
        out = Path(os.path.realpath(out))
    corpus_parents = [p for p in out.parents if not p.exists()]
    unchecked = pin.sha256 is None and downloaded  # a first download: not kept unless imported and recorded
    try:
        # The corpus first: retrieval needs no judge templates, so a source that fails leaves it usable.
        fetched.corpus, fetched.report = _import(bench, target, sha256, out)
        if pin.sha256 is None:
            lock.record(bench.data.url, _entry(bench, size, sha256, origin))
            fetched.trust = (
                f"recorded now (trust on first use) in {lock.path}"
                if downloaded
                else f"recorded now from {origin} (trust on first use) in {lock.path}"
            )
    except BaseException:
        if unchecked:
            if fetched.report is not None:
                shutil.rmtree(out, ignore_errors=True)
                remove_made(corpus_parents)
            target.unlink(missing_ok=True)
            remove_made(made)
        raise
    fetched.sources = [_source(source, downloads, say, deadline) for source in bench.sources]
    return fetched


def _entry(bench: Benchmark, size: int, sha256: str, origin: str, file: RemoteFile | None = None) -> LockEntry:
    file = file or bench.data
    assert file is not None
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return LockEntry(bench.name, file.name, size, sha256, now, origin)


def _source(source: SourceFile, downloads: Path, say: Log, deadline: float | None = None) -> Path:
    """One evaluation source at its repository path under ``sources/``, checked against its pinned digest."""
    target = Path(downloads) / "sources" / source.relative
    if target.is_file() and file_digest(target)[1] == source.sha256:
        return target
    locations = mirror_locations([source.relative]) or [source.url]
    say(f"downloading {source.repo} {source.path} at {source.commit[:12]} from {shown(locations[0])}")
    download(locations, target, Pin(None, source.sha256), limit=MAX_SOURCE_BYTES, deadline=deadline)
    return target


def _note(bench: Benchmark, sha256: str) -> str:
    name = bench.data.name if bench.data is not None else f"{bench.import_root} ({len(bench.tree)} files)"
    return f"benchmark {bench.name}\nfile {name}\nsha256 {sha256}\n"


# -- a release published as a tree of files (BEAM) ------------------------------------------------------------


def git_blob_id(path: Path) -> str:
    """The git blob id of the file at ``path`` (SHA-1 of ``blob <size>\\0`` and the bytes), read in chunks."""
    import hashlib

    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _file_pin(file: RemoteFile, lock: Lock) -> Pin:
    if file.sha256 is not None:
        return Pin(file.size, file.sha256)
    entry = lock.get(file.url)
    return Pin(entry.size, entry.sha256) if entry is not None else Pin(None, None)


def _tree_status(bench: Benchmark, downloads: Path, lock: Lock) -> Status:
    root = Path(downloads) / bench.name
    present = 0
    for file in bench.tree:
        path = root / file.name
        pin = _file_pin(file, lock)
        present += path.is_file() and (pin.size is None or path.stat().st_size == pin.size)
    whole = sum(1 for f in bench.tree if f.sha256 is not None)
    locked = sum(1 for f in bench.tree if f.sha256 is None and lock.get(f.url) is not None)
    trust = f"pinned: {len(bench.tree)} files, {whole} by size and SHA-256"
    if whole < len(bench.tree):
        trust += (
            f", {len(bench.tree) - whole} by git blob id (their size and SHA-256 are recorded in the lock at the first "
            f"download; {locked} recorded so far)"
        )
    fetched = "yes" if present == len(bench.tree) else ("no" if present == 0 else f"{present} of {len(bench.tree)} files")
    folder = corpus_folder(bench, downloads)
    return Status(fetched, trust, folder if (folder / FETCHED_NOTE).is_file() else None)


def _fetch_tree(
    bench: Benchmark, downloads: Path, lock: Lock, corpus_out: Path | None, say: Log, progress: Progress | None
) -> Fetched:
    """Every file of a tree release, each checked against its pin (a file pinned by its git blob id alone is
    checked against that, and its size and SHA-256 recorded in the lock), then the import of the tree."""
    import hashlib

    root = downloads / bench.name
    if any(f.sha256 is None for f in bench.tree) and not lock.path.parent.is_dir():
        raise EvalsError(
            f"lock file {lock.path}: its folder does not exist; the first download of {bench.name}'s files is recorded there"
        )
    manifest = hashlib.sha256()
    total = downloaded = 0
    for file in bench.tree:
        target = root / file.name
        pin = _file_pin(file, lock)
        size = sha256 = None
        if target.is_file():
            size, sha256 = file_digest(target)
            matches = (size, sha256) == (pin.size, pin.sha256) if pin.sha256 is not None else git_blob_id(target) == file.git_blob
            if not matches:
                say(f"{target}: the copy here does not match its pin; downloading it again")
                size = sha256 = None
        if size is None:
            locations = mirror_locations([file.name]) or [file.url]
            say(f"downloading {file.name} from {locations[0]}")
            size, sha256, origin = download(locations, target, pin, limit=MAX_BENCHMARK_FILE_BYTES, progress=progress)
            downloaded += 1
            if pin.sha256 is None and file.git_blob is not None and git_blob_id(target) != file.git_blob:
                target.unlink()
                raise EvalsError(f"{origin}: its git blob id does not match the pinned {file.git_blob}; refused")
        else:
            origin = f"the copy already in {root}"
        assert size is not None and sha256 is not None
        if pin.sha256 is None:
            lock.record(file.url, _entry(bench, size, sha256, origin, file))
        manifest.update(f"{file.name} {size} {sha256}\n".encode())
        total += size
    digest = manifest.hexdigest()
    folder = root / bench.import_root
    whole = sum(1 for f in bench.tree if f.sha256 is not None)
    trust = (
        f"pinned: {len(bench.tree)} files, {whole} by size and SHA-256, "
        f"{len(bench.tree) - whole} by git blob id (locked in {lock.path})"
    )
    listed = "sha256 of its files' paths, sizes and sha256"
    fetched = Fetched(bench, folder, total, digest, trust, downloaded > 0, digest_of=listed)
    fetched.corpus, fetched.report = _import(bench, folder, digest, corpus_out or corpus_folder(bench, downloads))
    fetched.sources = [_source(source, downloads, say) for source in bench.sources]
    return fetched


def _import(bench: Benchmark, file: Path, sha256: str, out: Path) -> tuple[Path, ImportReport | None]:
    """Import ``file`` into ``out`` unless ``out`` already holds the import of these same bytes. Under an
    exclusive lock on ``out``'s parent folder: a second fetch into the same folder waits, then reuses it."""
    out = Path(out)
    created = made_dirs(out.parent)
    try:
        with exclusive(out.parent):
            return _import_held(bench, file, sha256, out)
    except BaseException:
        remove_made(created)
        raise


def _import_held(bench: Benchmark, file: Path, sha256: str, out: Path) -> tuple[Path, ImportReport | None]:
    note = out / FETCHED_NOTE
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        try:
            same = note.is_file() and note.read_text(encoding="utf-8") == _note(bench, sha256)
        except (OSError, UnicodeDecodeError):
            same = False
        if same:
            return out, None
        raise EvalsError(
            f"corpus folder {out} exists and is not the import of this {bench.data.name if bench.data else 'file'}; "
            "remove it, or give another folder with --corpus-out"
        )
    staging = out.with_name(f".{out.name}.fetch-{os.getpid()}")
    try:
        assert bench.importer is not None
        report = import_corpus(bench.importer, file, staging, release=bench.name)  # its bytes were checked
        (staging / FETCHED_NOTE).write_text(_note(bench, sha256), encoding="utf-8")
        if out.exists():
            out.rmdir()  # an empty folder, checked above
        staging.rename(out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise EvalsError(f"cannot write the corpus folder {out}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.out = out
    return out, report
