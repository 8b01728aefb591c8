"""A failed write leaves the store file byte for byte as it was, with no WAL beside it.

DuckDB's transaction keeps a failed write out of the store's contents, but not
out of its bytes: a large insert writes row groups into the file before it
commits, and a checkpoint that fails part-way (a full disk) leaves the blocks it
wrote, a longer file and a write-ahead log DuckDB opens as it gives up. So a
write first copies the file beside the store and, if the write fails, puts the
copy back over the file in place, while the writer still holds DuckDB's lock (no
other process sees the file in between), and removes a WAL that was not there.
Both go through the descriptor the process holds the file by: opening and
closing another would drop DuckDB's lock (:mod:`evals.io.locking`).

The copy costs a read and a write of the whole file per write: on a 182 MB
store here (ext4, two cores) an append took 1.9-2.5 s instead of 1.3-1.7 s, the
copy itself 0.1-0.25 s and the rest its pages written out with the checkpoint's
fsync. It also needs room: a write needs about the store's size free beside it,
and says so, untouched, when there is not. (A filesystem with reflinks could
copy for nothing; ext4, where this was measured, has none.) A copy left by a killed process is
removed by the next writable open: DuckDB's checkpoint never overwrites the
blocks the file's current header uses, so the store is whole without it.

The copy's name is fixed and beside the store, so anyone who can write there
could plant something at it: a write first removes whatever is at the name (a
leftover, a symlink: removed, never followed), then creates the copy with
``O_EXCL|O_NOFOLLOW``, so a file or link that appears meanwhile is refused,
never written through; and it removes the copy afterwards only if the name
still holds the file it created.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from evals.model.provenance import SCRATCH_PREFIX
from evals.store._errors import StoreError

__all__ = [
    "copy_path",
    "creation_prefix",
    "is_scratch_folder",
    "kept_on_failure",
    "remove_leftover_copy",
    "scratch_folder",
    "wal_path",
]

_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def copy_path(path: Path) -> Path:
    """Where the copy of ``path`` a write keeps goes: beside it, hidden, named after it."""
    return path.with_name(f"{SCRATCH_PREFIX}{path.name}.undo")


def wal_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.wal")


def creation_prefix(path: Path) -> str:
    """The name a folder in which this process builds a new store ``path`` starts with (``_store.py``):
    hidden, named after the store and this process, so a killed builder's leftover can be told apart."""
    return f"{SCRATCH_PREFIX}{path.name}.new-{os.getpid()}-"


def scratch_folder(path: Path, kind: str, *, beside: bool = True) -> Path:
    """A new private folder (``mkdtemp``: owner only, a name no one can foresee) named after the store
    ``path``, ``kind`` and this process: beside the store (so a killed process's leftover is found and
    removed, :func:`remove_leftover_copy`), or in the system's temporary folder when not ``beside`` or
    when none can be made beside it."""
    prefix = f"{SCRATCH_PREFIX}{path.name}.{kind}-{os.getpid()}-"
    if beside:
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=path.parent))
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix=prefix))


def is_scratch_folder(folder: Path, kind: str) -> bool:
    """Whether ``folder`` is one :func:`scratch_folder` made for ``kind`` in this process."""
    return re.fullmatch(rf"{re.escape(SCRATCH_PREFIX)}.*\.{re.escape(kind)}-{os.getpid()}-[^/]*", folder.name) is not None


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _unlink_if_ours(name: Path, ours: tuple[int, int]) -> None:
    """Remove ``name`` only if it is still the file this process created (not one put in its place)."""
    try:
        if _identity(os.lstat(name)) == ours:
            name.unlink()
    except OSError:
        pass


def _new_copy_file(path: Path, copy: Path) -> os.FileIO:
    """The copy's file, created new (read and write, owner only): whatever is at its name is removed
    first, and a file or link that appears there meanwhile is refused, never written through."""
    try:
        copy.unlink(missing_ok=True)
        fd = os.open(copy, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except OSError as exc:
        raise StoreError(
            f"cannot write to store {path}: cannot make the copy that keeps it whole if the write fails at {copy} "
            f"({exc.strerror or exc}); remove what is there (the store is unchanged)"
        ) from None
    return os.fdopen(fd, "r+b", buffering=0)


@contextmanager
def kept_on_failure(path: Path, file: os.FileIO) -> Iterator[None]:
    """Run a write to the store file ``path``; if it raises, put the file back as it was before.

    ``file`` is the store file as this process holds it (:func:`evals.io.locking.hold`): it is read and
    written through that, never opened afresh, as closing another descriptor of it would drop DuckDB's lock.
    The copy is likewise read back through the descriptor it was written by, never by its name."""
    copy = copy_path(path)
    wal = wal_path(path)
    had_wal = wal.exists()
    with _new_copy_file(path, copy) as kept:
        ours = _identity(os.fstat(kept.fileno()))
        try:
            try:
                _copy(file, kept)
            except OSError as exc:
                size = os.fstat(file.fileno()).st_size
                raise StoreError(
                    f"cannot write to store {path}: no room beside it for the copy that keeps it whole if the write fails "
                    f"({exc.strerror or exc}); free about {size / 1e6:,.1f} MB in {path.parent} (the store is unchanged)"
                ) from None
            try:
                yield
            except BaseException:
                # Shortening the file first frees what the failed write added, so this needs no new room.
                file.truncate(os.fstat(kept.fileno()).st_size)
                _copy(kept, file)
                os.fsync(file.fileno())
                if not had_wal:
                    wal.unlink(missing_ok=True)
                raise
        finally:
            _unlink_if_ours(copy, ours)


def _copy(source: BinaryIO, target: BinaryIO) -> None:
    """All of ``source`` over the start of ``target``, both from their first byte."""
    source.seek(0)
    target.seek(0)
    while chunk := source.read(_CHUNK):
        view = memoryview(chunk)
        while view:  # an unbuffered file may write part of a chunk
            view = view[target.write(view) :]


def remove_leftover_copy(path: Path) -> None:
    """Remove what killed writers left beside the store ``path``: the copy (if any; a link there is
    removed, not followed), and folders in which a process that is gone was building the store or
    keeping what DuckDB moved out of memory (:func:`scratch_folder`)."""
    try:
        copy_path(path).unlink(missing_ok=True)
    except OSError:
        pass  # a folder, say: the next write refuses it, naming it
    pattern = re.compile(rf"{re.escape(SCRATCH_PREFIX + path.name)}\.(?:new|spill)-(\d+)-[^/]*")
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        found = pattern.fullmatch(name)
        folder = path.parent / name
        if found and not _running(int(found.group(1))) and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    """Whether process ``pid`` may still be running (this one is; one we cannot probe counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process, or cannot tell: its folder is left alone
    return True
