"""Files the commands write (``--output``, the store): checked before any work, written whole or not at all.

An output file is the one thing a command replaces, so it must never be
something else the user has:

- not the results store, its cache (``<store>.cache.duckdb``) or their
  write-ahead logs, and not a file the command reads (a corpus file, an
  import file): ``--output`` naming one of them would replace it with JSON.
  Paths are compared as the files they name (resolved symlinks, ``..``, and
  hard links: the same device and inode), not as strings;
- not any other database (a file that starts with DuckDB's or SQLite's header,
  or a DuckDB write-ahead log beside one), nor a conversation file of any corpus
  (a JSON object with ``schema_version`` and ``turns``), wherever it is; told
  from the file's first 64 KiB, never the whole file, whatever a folder holds;
- nothing in a corpus folder: not the one the command plays, nor any folder
  that holds a conversation file, where a new ``*.json`` would be read as a
  conversation by the next run (and anything else there is the corpus's own);
- not a name evals keeps for its scratch files (``.evals-scratch-…``, such as
  the store's undo copy), which evals deletes;
- a regular file we may write (one without write permission is refused, as a
  read-only store is) or a new path, never a symlink (it would be written
  through to wherever it points), a device (``/dev/null`` would be replaced by
  a regular file when run as root), a FIFO, a socket or a directory; and not
  ``-``, which here is no standard output but a file of that name.

:func:`check_output` refuses, in one line naming the path and what it is,
before anything is played; :func:`write_output` checks again (the path may have
changed meanwhile) and writes a temporary file beside the target, then renames
it over the target, so a crash never leaves half a file and a link planted
in the meantime is replaced, not followed. :func:`check_store_place` holds the
store to the corpus rule, and :func:`append_output` appends (the gate's
``$GITHUB_STEP_SUMMARY``) to a regular file only, never blocking on a FIFO.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from evals.errors import EvalsError
from evals.io.cache import cache_path_for
from evals.io.jsonfile import MAX_CORPUS_FILE_BYTES

# The names of evals' own scratch files and folders (undo journals, spill folders, write probes): they
# never count as a change to the tree, and no output may take such a name, since evals deletes them.
SCRATCH_PREFIX = ".evals-scratch-"

__all__ = [
    "OutputError",
    "append_output",
    "check_not_an_input",
    "check_output",
    "check_store_place",
    "store_files",
    "write_output",
]

_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}

# Opened to read a header or append, never to block (a FIFO) nor to follow a link planted meanwhile.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
PREFIX_BYTES = 1 << 16  # what is read of a file to tell whether it is a conversation: never the whole of a large one
_TURNS_KEY = re.compile(rb'"turns"\s*:')
_VERSION_KEY = re.compile(rb'"schema_version"\s*:')


class OutputError(EvalsError):
    """An output path the command refuses to write."""


def store_files(store: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The files that make up the store at ``store``, each with what it is: the store, its
    cache (:func:`evals.io.cache.cache_path_for`) and the write-ahead log DuckDB keeps beside each."""
    store = Path(store)
    cache = cache_path_for(store)
    return [
        (store, "the results store"),
        (Path(f"{store}.wal"), "the results store's write-ahead log"),
        (cache, "the store's cache"),
        (Path(f"{cache}.wal"), "the cache's write-ahead log"),
    ]


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: one resolved path, or (both existing) one device and inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _refuse(path: Path, option: str, what: str) -> OutputError:
    return OutputError(f"{option} {path} is {what}; give a new path or a regular file that nothing else uses")


def _check_kind(path: Path, option: str) -> None:
    """Refuse anything at ``path`` but a regular file (a symlink is refused even to a regular file)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"cannot use {option} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise _refuse(path, option, kind)


def _check_writable(path: Path, option: str) -> None:
    """Refuse an existing file without write permission, as a read-only store is refused: read-only is
    taken as meant (even by root, who could replace it), and renaming over it would ignore it."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # absent, or refused by _check_kind
    if not stat.S_ISREG(mode):
        return  # refused by _check_kind
    if not mode & 0o222:
        raise OutputError(
            f"{option} {path} is read-only (mode {stat.S_IMODE(mode):o}); make it writable (chmod u+w), or give another path"
        )
    try:  # opened for writing, nothing written: the system may still refuse (an immutable file)
        os.close(os.open(path, os.O_WRONLY | _NOFOLLOW | _NONBLOCK))
    except OSError as exc:
        raise OutputError(f"cannot write {option} {path}: {exc.strerror or exc}") from None


def _check_folder(path: Path, option: str) -> None:
    """Refuse a path whose nearest existing ancestor is not a writable folder: found now, not after the run."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {option} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {option} {path}: folder {folder} is not writable")


# -- what a file holds, and whether a folder is a corpus ------------------------------------------


def _database_kind(head: bytes) -> str | None:
    if head[8:12] == b"DUCK":  # DuckDB's magic, after an 8-byte checksum
        return "a DuckDB database"
    if head.startswith(b"SQLite format 3\0"):
        return "a SQLite database"
    return None


def _looks_like_conversation(file, size: int, name: str) -> bool:
    """Whether the open regular ``file`` is a conversation file (a JSON object with ``schema_version`` and
    ``turns``), from its first :data:`PREFIX_BYTES` bytes only, whatever its size: a file that fits is parsed;
    a longer one counts when its prefix opens an object naming both keys (an export or a result document names
    ``turns`` up front but no ``schema_version``: a folder of them is no corpus). One that holds both names but
    no longer parses, named ``*.json``, counts too (a conversation being edited is still the user's)."""
    if size == 0 or size > MAX_CORPUS_FILE_BYTES:  # the corpus loader reads none of these
        return False
    head = os.pread(file.fileno(), PREFIX_BYTES, 0)
    turns, version = _TURNS_KEY.search(head) is not None, _VERSION_KEY.search(head) is not None
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") or not turns:
        return False
    if size > len(head):
        return version
    try:
        document = json.loads(head)
    except (ValueError, RecursionError):
        return version and name.endswith(".json")
    return isinstance(document, dict) and "turns" in document and "schema_version" in document


def _holds(path: Path) -> str | None:
    """What the existing regular file ``path`` holds that no output may replace: a database or a
    conversation; None for anything else (or nothing there). Only a regular file is opened (a device
    is never, not even to read its first bytes), and checked again once open."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        kind = _database_kind(os.pread(fd, 16, 0))
        if kind is not None:
            return kind
        try:
            if _looks_like_conversation(file, info.st_size, path.name):
                return "a conversation file"
        except OSError:  # cannot be read: not a conversation this tool could have read either
            return None
    return None


def _conversation_in(folder: Path) -> Path | None:
    """A conversation file directly inside ``folder`` (as a corpus reads ``*.json``), or None."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return None
    for entry in entries:
        if entry.name.endswith(".json") and _holds(Path(entry.path)) == "a conversation file":
            return Path(entry.path)
    return None


def _check_content(path: Path, option: str) -> None:
    """Refuse a file that is a database or a conversation, or the write-ahead log of a DuckDB file."""
    what = _holds(path)
    if what is None and path.name.endswith(".wal"):
        database = path.with_name(path.name.removesuffix(".wal"))
        if _holds(database) == "a DuckDB database":
            what = f"the write-ahead log of the DuckDB database {database}"
    if what is not None:
        raise _refuse(path, option, what)


def _check_not_in_a_corpus(path: Path, option: str, corpus: Path | None) -> None:
    """Refuse ``path`` in the corpus folder ``corpus`` or in any folder that holds a conversation file."""
    folder = path.parent
    if corpus is not None and Path(corpus).is_dir() and _same(folder, Path(corpus)):
        if path.suffix == ".json":
            raise _refuse(path, option, f"in the corpus folder {corpus}, where every *.json is read as a conversation")
        raise _refuse(path, option, f"in the corpus folder {corpus}, which evals never writes into")
    found = _conversation_in(folder) if folder.is_dir() else None
    if found is not None:
        raise _refuse(path, option, f"in a corpus folder ({found} is a conversation file), which evals never writes into")


def _check_name(path: Path, option: str) -> None:
    if str(path) == "-":
        raise OutputError(f"{option} - would be a file named '-', not standard output; give a file path")
    if path.name.startswith(SCRATCH_PREFIX):
        raise _refuse(path, option, f"named like evals' own scratch files ({SCRATCH_PREFIX}…), which evals deletes")


# -- the checks the commands call ------------------------------------------------------------------


def check_output(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    reads: Iterable[tuple[str | os.PathLike[str], str]] = (),
    folders: Iterable[tuple[str | os.PathLike[str], str]] = (),
    option: str = "--output",
) -> None:
    """Refuse ``path`` as an output file, before any work, when writing it would lose something:
    :func:`check_not_an_input`, then it must be a regular file we may write or a new path in a writable folder."""
    check_not_an_input(path, store=store, corpus=corpus, reads=reads, folders=folders, option=option)
    _check_kind(Path(path), option)
    _check_writable(Path(path), option)
    _check_folder(Path(path), option)


def check_not_an_input(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    reads: Iterable[tuple[str | os.PathLike[str], str]] = (),
    folders: Iterable[tuple[str | os.PathLike[str], str]] = (),
    option: str = "--output",
) -> None:
    """Refuse ``path`` as a file to write (or append to) when it is one the command keeps or reads, or
    anything else the user would lose (a database, a conversation, a file in a corpus folder, a scratch name).

    ``store``: the results store the command uses (its cache and logs are protected with it);
    ``corpus``: the corpus folder it plays; ``reads``: other files it reads, each with what it is;
    ``folders``: folders it reads, each with what it is (nothing anywhere inside them is written).
    The message names ``option`` and the path."""
    path = Path(path)
    _check_name(path, option)
    real = Path(os.path.realpath(path))
    for folder, what in folders:
        if Path(folder).is_dir() and real.is_relative_to(os.path.realpath(folder)):
            raise _refuse(path, option, f"inside {what} ({folder}), which this command reads and never writes into")
    protected = [(Path(p), what) for p, what in reads]
    if store is not None:
        protected.extend(store_files(store))
    for other, what in protected:
        if _same(path, other):
            raise _refuse(path, option, f"{what} ({other})" if str(other) != str(path) else what)
    _check_content(path, option)
    _check_not_in_a_corpus(path, option, Path(corpus) if corpus is not None else None)


def check_store_place(
    store: str | os.PathLike[str], *, corpus: str | os.PathLike[str] | None = None, option: str = "--store"
) -> None:
    """Refuse a results store (and so its cache, beside it) in the corpus folder ``corpus`` or in any
    folder that holds a conversation file: a store named ``*.json`` there would break the corpus,
    and any other file there would be written into a folder evals only reads."""
    store = Path(store)
    _check_not_in_a_corpus(store, option, Path(corpus) if corpus is not None else None)


def write_output(path: str | os.PathLike[str], data: bytes, *, option: str = "--output") -> None:
    """Write ``data`` to ``path`` whole or not at all: a new file beside it, renamed over it.

    The target must still be a regular file we may write, or absent (checked again here); the
    new file keeps the permissions of the one it replaces, or the umask's."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    _check_kind(path, option)
    _check_writable(path, option)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # O_EXCL|O_NOFOLLOW: a file (or link) already at the temporary name is never written through.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_appendable(path: str | os.PathLike[str], *, option: str) -> None:
    """Refuse ``path`` as a file to append to unless it is a regular file or a new path: a FIFO
    would block the command until something reads it, a device or a link is not ours to write."""
    _check_kind(Path(path), option)


def append_output(path: str | os.PathLike[str], text: str, *, option: str) -> None:
    """Append ``text`` to the regular file ``path`` (created if missing). Opened without following a
    link and without blocking (a FIFO with no reader fails at once), then checked again: whatever
    was swapped in since :func:`check_appendable` is refused, not written to."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK, 0o666)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, option, "a symbolic link") from None
        raise OutputError(f"cannot append to {option} {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(path, option, _KINDS.get(stat.S_IFMT(mode), "not a regular file"))
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise OutputError(f"cannot append to {option} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
