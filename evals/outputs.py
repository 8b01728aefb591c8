"""Files the commands write (``--output``): checked before any work, written whole or not at all.

An output file is the one thing a command replaces, so it must never be
something else the user has:

- not the results store, its cache (``<store>.cache.duckdb``) or their
  write-ahead logs, and not a file the command reads (a corpus file, an
  import file): ``--output`` naming one of them would replace it with JSON.
  Paths are compared as the files they name (resolved symlinks, ``..``, and
  hard links: the same device and inode), not as strings;
- not a ``*.json`` directly inside the corpus folder, which the next run would
  read as a conversation;
- a regular file or a new path, never a symlink (it would be written through
  to wherever it points), a device (``/dev/null`` would be replaced by a regular
  file when run as root), a FIFO, a socket or a directory.

:func:`check_output` refuses, in one line naming the path and what it is,
before anything is played; :func:`write_output` checks again (the path may have
changed meanwhile) and writes a temporary file beside the target, then renames
it over the target, so a crash never leaves half a file and a link planted
in the meantime is replaced, not followed.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from evals.cache import cache_path_for
from evals.errors import EvalsError

__all__ = ["OutputError", "check_not_an_input", "check_output", "store_files", "write_output"]

_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class OutputError(EvalsError):
    """An output path the command refuses to write."""


def store_files(store: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The files that make up the store at ``store``, each with what it is: the store, its
    cache (:func:`evals.cache.cache_path_for`) and the write-ahead log DuckDB keeps beside each."""
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


def _check_folder(path: Path, option: str) -> None:
    """Refuse a path whose nearest existing ancestor is not a writable folder: found now, not after the run."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {option} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {option} {path}: folder {folder} is not writable")


def check_output(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    reads: Iterable[tuple[str | os.PathLike[str], str]] = (),
    option: str = "--output",
) -> None:
    """Refuse ``path`` as an output file, before any work, when writing it would lose something:
    :func:`check_not_an_input`, then it must be a regular file or a new path in a writable folder."""
    check_not_an_input(path, store=store, corpus=corpus, reads=reads, option=option)
    _check_kind(Path(path), option)
    _check_folder(Path(path), option)


def check_not_an_input(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    reads: Iterable[tuple[str | os.PathLike[str], str]] = (),
    option: str = "--output",
) -> None:
    """Refuse ``path`` as a file to write (or append to) when it is one the command keeps or reads.

    ``store``: the results store the command uses (its cache and logs are protected with it);
    ``corpus``: the corpus folder it plays; ``reads``: other files it reads, each with what it is.
    The message names ``option`` and the path."""
    path = Path(path)
    protected = [(Path(p), what) for p, what in reads]
    if store is not None:
        protected.extend(store_files(store))
    for other, what in protected:
        if _same(path, other):
            raise _refuse(path, option, f"{what} ({other})" if str(other) != str(path) else what)
    if corpus is not None and Path(corpus).is_dir() and path.suffix == ".json" and _same(path.parent, Path(corpus)):
        raise _refuse(path, option, f"in the corpus folder {corpus}, where every *.json is read as a conversation")


def write_output(path: str | os.PathLike[str], data: bytes, *, option: str = "--output") -> None:
    """Write ``data`` to ``path`` whole or not at all: a new file beside it, renamed over it.

    The target must still be a regular file or absent (checked again here); the
    new file keeps the permissions of the one it replaces, or the umask's."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    _check_kind(path, option)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # O_EXCL|O_NOFOLLOW: a file (or link) already at the temporary name is never written through.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
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
