"""A failed write leaves the store file byte for byte as it was, with no WAL beside it.

DuckDB's transaction keeps a failed write out of the store's contents, but not
out of its bytes: a large insert writes row groups into the file before it
commits, and a checkpoint that fails part-way (a full disk) leaves the blocks it
wrote, a longer file and a write-ahead log DuckDB opens as it gives up. So a
write first copies the file beside the store and, if the write fails, puts the
copy back over the file in place, while the writer still holds DuckDB's lock (no
other process sees the file in between), and removes a WAL that was not there.
Both go through the descriptor the process holds the file by: opening and
closing another would drop DuckDB's lock (:mod:`evals.locking`).

The copy costs a read and a write of the whole file per write: on a 182 MB
store here (ext4, two cores) an append took 1.9-2.5 s instead of 1.3-1.7 s, the
copy itself 0.1-0.25 s and the rest its pages written out with the checkpoint's
fsync. It also needs room: a write needs about the store's size free beside it,
and says so, untouched, when there is not. (A filesystem with reflinks could
copy for nothing; ext4, where this was measured, has none.) A copy left by a killed process is
removed by the next writable open: DuckDB's checkpoint never overwrites the
blocks the file's current header uses, so the store is whole without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from evals.provenance import SCRATCH_PREFIX
from evals.store._errors import StoreError

__all__ = ["copy_path", "kept_on_failure", "remove_leftover_copy", "wal_path"]

_CHUNK = 1 << 20


def copy_path(path: Path) -> Path:
    """Where the copy of ``path`` a write keeps goes: beside it, hidden, named after it."""
    return path.with_name(f"{SCRATCH_PREFIX}{path.name}.undo")


def wal_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.wal")


@contextmanager
def kept_on_failure(path: Path, file: os.FileIO) -> Iterator[None]:
    """Run a write to the store file ``path``; if it raises, put the file back as it was before.

    ``file`` is the store file as this process holds it (:func:`evals.locking.hold`): it is read and
    written through that, never opened afresh, as closing another descriptor of it would drop DuckDB's lock."""
    copy = copy_path(path)
    wal = wal_path(path)
    had_wal = wal.exists()
    try:
        with open(copy, "wb") as out:
            _copy(file, out)
    except OSError as exc:
        copy.unlink(missing_ok=True)
        size = os.fstat(file.fileno()).st_size
        raise StoreError(
            f"cannot write to store {path}: no room beside it for the copy that keeps it whole if the write fails "
            f"({exc.strerror or exc}); free about {size / 1e6:,.1f} MB in {path.parent} (the store is unchanged)"
        ) from None
    try:
        yield
    except BaseException:
        with open(copy, "rb") as source:
            # Shortening the file first frees what the failed write added, so this needs no new room.
            file.truncate(os.fstat(source.fileno()).st_size)
            _copy(source, file)
            os.fsync(file.fileno())
        if not had_wal:
            wal.unlink(missing_ok=True)
        raise
    finally:
        copy.unlink(missing_ok=True)


def _copy(source: BinaryIO, target: BinaryIO) -> None:
    """All of ``source`` over the start of ``target``, both from their first byte."""
    source.seek(0)
    target.seek(0)
    while chunk := source.read(_CHUNK):
        view = memoryview(chunk)
        while view:  # an unbuffered file may write part of a chunk
            view = view[target.write(view) :]


def remove_leftover_copy(path: Path) -> None:
    """Remove the copy a killed writer left beside the store ``path``, if any."""
    copy_path(path).unlink(missing_ok=True)
