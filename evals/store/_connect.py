"""Opening the store's file: checks made before DuckDB touches it, the connection, and what every part shares.

DuckDB admits one writer process, and while it holds the file no other
process can open it at all, not even to read. So callers compute first and
open the store only for a short read or write; :func:`connect` waits for the
lock with bounded, jittered backoff and then gives up with a clear error.
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import duckdb
import pyarrow as pa

from evals.io import locking
from evals.model.provenance import SCRATCH_PREFIX
from evals.store._errors import StoreError
from evals.store._schema import SCHEMA_TABLE
from evals.store._undo import is_scratch_folder, scratch_folder

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "MEMORY_LIMIT",
    "READ_MEMORY_LIMIT",
    "Connected",
    "applied_migrations",
    "check_writable",
    "close",
    "connect",
    "damaged",
    "read_error",
    "reads",
    "rollback",
    "utc_now",
    "writable_directory",
    "writable_file",
    "write_error",
]

DEFAULT_LOCK_TIMEOUT = locking.DEFAULT_LOCK_TIMEOUT
# DuckDB's buffer pool on a store connection, at most. Its default (80% of the machine's memory) let a
# write keep every block it wrote or read cached until the checkpoint (1.2 GB for a 100-question
# LongMemEval_m corpus), and a read of a whole corpus, a conversation at a time, every block it read.
# Under this limit DuckDB drops blocks it can read again and moves rows not yet written (up to a row
# group of 122,880 turns, about 185 MB at LongMemEval's turn length) to its temporary folder. At 256 MB
# a corpus of fewer turns than a row group stayed in memory whole and one of more held a whole row
# group: 517 MiB at 20 questions against 637 at 100; at 128 MB, 497 against 530.
# A reader needs less: reading a 100-question corpus's texts 10,000 turns at a time peaked at 399 MiB
# with 128 MB, 337 with 64 (324 for 20 questions). What needs more (a whole vector of records stored
# as megabytes of text each, which DuckDB reads at once) gets it: Connected._arrow, StoreWriter.
MEMORY_LIMIT = "128MB"
READ_MEMORY_LIMIT = "64MB"
SPILL = "spill"  # the temporary folder's kind (evals.store._undo.scratch_folder)
# Each open connection's spill folder, by id(connection): removed when close() closes the last holding it.
_SPILLS: dict[int, Path] = {}


def _open_error(path: Path, exc: duckdb.Error) -> StoreError:
    message = str(exc)
    if "not a valid DuckDB database file" in message:
        return StoreError(f"{path} is not a DuckDB file, so not an evals store; refusing to use it")
    if locking.is_damage_error(exc):
        return damaged(path, exc)
    reason = message.split(":", 1)[-1].strip() if message.startswith(("IO Error", "IOException")) else message
    return StoreError(f"cannot open store {path}: {reason}")


def read_error(path: Path, exc: duckdb.Error) -> StoreError:
    """The error for a read of the store that DuckDB failed: a damaged file said so, anything else as DuckDB put it."""
    if locking.is_damage_error(exc):
        return damaged(path, exc)
    return StoreError(f"cannot read store {path}: {exc}")


Method = TypeVar("Method", bound=Callable[..., Any])


def reads(method: Method) -> Method:
    """Mark a method of the store as a read: a DuckDB failure inside it (a damaged file, most likely)
    becomes one :class:`StoreError` naming the file (:func:`read_error`), not a traceback."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generator(self: Connected, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, *args, **kwargs)
            except duckdb.Error as exc:
                raise read_error(self.path, exc) from None

        return generator  # type: ignore[return-value]

    @functools.wraps(method)
    def wrapper(self: Connected, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except duckdb.Error as exc:
            raise read_error(self.path, exc) from None

    return wrapper  # type: ignore[return-value]


def write_error(path: Path, exc: duckdb.Error, action: str | None = None) -> StoreError:
    """The error for a write DuckDB failed (``action``: what was being done, by default writing to the store);
    the file has been put back as it was (:mod:`evals.store._undo`)."""
    action = action or f"write to store {path}"
    message = str(exc)
    if "No space left on device" in message:
        return StoreError(f"cannot {action}: the disk is full; the store is unchanged (free some space and try again)")
    if locking.is_damage_error(exc):
        return damaged(path, exc)
    return StoreError(f"cannot {action}: {message}; the store is unchanged")


def damaged(path: Path, exc: Exception) -> StoreError:
    """The error for a store DuckDB could not read because the file is damaged (``exc`` says how)."""
    if "Could not read enough bytes" in str(exc):
        what = "damaged (cut short: it ends before data its own index points to)"
    else:
        what = "corrupt (its bytes were altered: a block no longer matches its checksum)"
    return StoreError(f"store {path} is {what}, so it cannot be read; restore it from a copy (nothing was written to it)")


def connect(path: Path, read_only: bool, lock_timeout: float) -> tuple[duckdb.DuckDBPyConnection, locking.Held]:
    """Connect, waiting for another process's lock (:func:`evals.io.locking.connect`); a file that is
    not DuckDB's, or is cut short, is refused before DuckDB reads it. Returns the connection and the
    file as this process holds it (:func:`evals.io.locking.hold`): let go of it after closing the connection."""
    try:
        held = locking.hold(path, writable=not read_only)
    except locking.BadFile as exc:
        if exc.damaged:
            raise StoreError(f"store {path} {exc}; restore it from a copy (nothing was written to it)") from None
        raise StoreError(f"{path} {exc}, so not an evals store; refusing to use it") from None
    except OSError as exc:
        raise StoreError(f"cannot open store {path}: {exc.strerror or exc}") from None
    try:
        # Writes go without DuckDB's write-ahead log and are checkpointed as they commit
        # (see _write.py): logging a corpus of long conversations doubled the memory it took.
        con = locking.connect(path, read_only=read_only, lock_timeout=lock_timeout, wal=False)
    except BaseException as exc:
        held.let_go()
        if isinstance(exc, locking.LockTimeout):
            raise StoreError(
                f"store {path} is locked by another process (waited {lock_timeout:g} s); try again when that process has finished"
            ) from None
        if isinstance(exc, duckdb.Error):
            raise _open_error(path, exc) from None
        raise
    if not read_only:
        held.opened()  # a store just created is held from now on, as an existing one was before connecting
        # DuckDB's allocator keeps what a query freed for the next; an append's steps (the
        # corpus comparison, the rows, the checkpoint) each free hundreds of megabytes, which
        # then stack up. Its background threads hand them back to the system as they go.
        con.execute("SET allocator_flush_threshold = '32MB'")
        con.execute("SET allocator_background_threads = true")
    spill: Path | None = None
    try:
        con.execute(f"SET memory_limit = '{READ_MEMORY_LIMIT if read_only else MEMORY_LIMIT}'")
        # What DuckDB moves out of memory goes to a private folder of ours: beside the store for a
        # writer, in the system's temporary folder for a reader. By default it would be ".tmp" in the
        # working directory (a writer attaches the store to an in-memory database) or beside the store.
        spill = scratch_folder(path, SPILL, beside=not read_only)
        literal = str(spill).replace("'", "''")
        try:
            con.execute(f"SET temp_directory = '{literal}'")
        except duckdb.NotImplementedException:
            # DuckDB shares one database between a process's connections to a file, and its temporary folder
            # cannot change once something was spilled there: another connection of ours has it (build-site
            # reads the corpus texts while its first reader is open). Share that folder; the last to close removes it.
            shutil.rmtree(spill, ignore_errors=True)
            (current,) = con.execute("SELECT current_setting('temp_directory')").fetchone()
            spill = Path(current)
        _SPILLS[id(con)] = spill
    except BaseException:
        con.close()
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
        held.let_go()
        raise
    return con, held


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connection :func:`connect` made, and remove the temporary folder it was given, if any:
    also after a failed write (a full disk), when the connection can no longer say which folder it had."""
    folder = _SPILLS.pop(id(con), None)
    con.close()
    if folder is not None and folder not in _SPILLS.values() and is_scratch_folder(folder, SPILL):
        shutil.rmtree(folder, ignore_errors=True)


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str]] | None:
    """The (version, name) of each applied migration; [] for an empty database; None if not a store."""
    tables = {
        row[0]
        for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
        ).fetchall()
    }
    if SCHEMA_TABLE in tables:
        return con.execute(f"SELECT version, name FROM {SCHEMA_TABLE} ORDER BY version").fetchall()
    return None if tables else []


def writable_directory(directory: Path, create: bool) -> None:
    """Make sure a new store file can be created in ``directory`` before anything is computed."""
    if not directory.exists():
        if not create:
            raise StoreError(f"cannot create store: directory {directory} does not exist (create it first)")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create store directory {directory}: {exc.strerror or exc}") from None
    if not directory.is_dir():
        raise StoreError(f"cannot create store: {directory} is not a directory")
    try:
        # A new file of a name no one can foresee (mkstemp: O_EXCL, never through a link), then removed.
        fd, probe = tempfile.mkstemp(prefix=f"{SCRATCH_PREFIX}write-probe-{os.getpid()}-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StoreError(f"cannot write in store directory {directory}: {exc.strerror or exc}") from None


def writable_file(path: Path, what: str = "store", remedy: str = "give another --store") -> None:
    """Fail now if the existing file ``path`` could not be written: no write permission (taken as
    meant even by root, who could write it), or the system refuses (an immutable file)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot use {what} {path}: {exc.strerror or exc}") from None
    if not mode & 0o222:
        raise StoreError(f"{what} {path} is read-only (mode {stat.S_IMODE(mode):o}); make it writable (chmod u+w), or {remedy}")
    try:
        with open(path, "r+b"):  # opened for writing, nothing written
            pass
    except OSError as exc:
        raise StoreError(f"cannot write to {what} {path}: {exc.strerror or exc}") from None


def check_writable(path: Path, *, create_parent: bool = False) -> None:
    """Fail now, before any work is done, if a store at ``path`` could not be written."""
    path = Path(path)
    if path.is_dir():
        raise StoreError(f"store path {path} is a directory; give a file such as {path / 'results.duckdb'}")
    writable_file(path, remedy="give another --store")
    writable_directory(path.parent, create_parent and not path.exists())


class Connected:
    """What the store's reading and writing parts share: the open connection, its file, and small queries."""

    def __init__(self, con: duckdb.DuckDBPyConnection, held: locking.Held, path: Path, *, read_only: bool) -> None:
        self._con = con
        self._held = held  # the file as this process holds it: closed only after the connection
        self.path = path
        self.read_only = read_only
        self._failed = False  # a write failed: the file was put back, and DuckDB's view of it is stale

    def copy_into(self, writer: BinaryIO) -> int:
        """Write the store file's bytes to ``writer``; returns how many. Read through the handle this
        process already holds (opening the file again and closing it would drop DuckDB's lock, see
        :mod:`evals.io.locking`), while this connection keeps writers out: the copy is the store as this
        connection reads it, never one torn by an append in another process."""
        file = self._held.opened()
        offset = 0
        while chunk := os.pread(file.fileno(), 1 << 20, offset):
            writer.write(chunk)
            offset += len(chunk)
        return offset

    def _one(self, query: str, params: list[Any] | None = None) -> tuple | None:
        # fetchall, not fetchone: DuckDB 2 refuses further queries while a result is unfinished.
        rows = self._con.execute(query, params or []).fetchall()
        return rows[0] if rows else None

    def _arrow(self, query: str, params: list[Any]) -> pa.Table:
        return self._unbounded_if_needed(self._fetch_arrow, query, params)

    def _rows(self, query: str, params: list[Any]) -> list[tuple]:
        """``fetchall`` of ``query``, read as :meth:`_arrow` reads: without the buffer pool's limit if it must."""
        return self._unbounded_if_needed(lambda q, p: self._con.execute(q, p).fetchall(), query, params)

    def _unbounded_if_needed(self, fetch: Callable[[str, list[Any]], Any], query: str, params: list[Any]) -> Any:
        try:
            return fetch(query, params)
        except duckdb.OutOfMemoryException:
            # Over the buffer pool's limit (records stored as megabytes of text each, which DuckDB reads a
            # whole vector of at once; a run's rankings of 21,000 turns a test point, sorted): read without
            # the limit rather than not at all, as before there was one.
            (limit,) = self._one("SELECT current_setting('memory_limit')")
            self._con.execute("RESET memory_limit")
            try:
                return fetch(query, params)
            finally:
                self._con.execute(f"SET memory_limit = '{limit}'")

    def _fetch_arrow(self, query: str, params: list[Any]) -> pa.Table:
        relation = self._con.sql(query, params=params)
        # DuckDB 2 names it to_arrow_table; 1.x called it arrow.
        return relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()

    def _columns(self, table: str) -> set[str]:
        rows = self._con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = ?",
            [table],
        ).fetchall()
        return {row[0] for row in rows}

    def _tables(self) -> set[str]:
        return {
            row[0]
            for row in self._con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
            ).fetchall()
        }


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # nothing to roll back: the failed statement already ended the transaction


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
