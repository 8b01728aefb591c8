"""Opening a DuckDB file: the checks made before DuckDB reads it, the settings every connection
gets, and waiting with jittered backoff for a file another process holds.

DuckDB admits one writer process, and while it holds a file no other process
can open it at all. The results store and the cache beside it both open
through :func:`connect`, so both wait for the lock the same way and both give
up after ``lock_timeout`` seconds with an error their caller words.

Every DuckDB connection the package makes comes from :func:`open_duckdb`, so
none of them fetches or loads an extension on its own: given a SQLite file,
DuckDB would otherwise download ``sqlite_scanner`` to read it.

DuckDB's lock is a POSIX record lock, which belongs to the process and goes
the moment the process closes *any* descriptor of the file. So the package
reads a DuckDB file it may hold (its header, a copy of it) only through
:func:`hold`, which opens it once per process and closes it only when the last
user has let go, after DuckDB has closed it.
"""

from __future__ import annotations

import errno
import os
import random
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "NO_EXTENSIONS",
    "BadFile",
    "Held",
    "LockTimeout",
    "connect",
    "hold",
    "is_lock_error",
    "open_duckdb",
]

DEFAULT_LOCK_TIMEOUT = 30.0

NO_EXTENSIONS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

# A DuckDB file starts with three 4 KiB headers: the main one ("DUCK" at byte 8), then two
# database headers, of which the one with the higher iteration is current; data blocks follow.
_MAGIC_OFFSET = 8
_MAGIC = b"DUCK"
_HEADER_BLOCK = 4096
_HEADERS_SIZE = 3 * _HEADER_BLOCK


class LockTimeout(Exception):
    """Another process held the file for all of ``waited`` seconds; the caller says what that means."""

    def __init__(self, waited: float) -> None:
        self.waited = waited
        super().__init__(f"locked for {waited:g} s")


class BadFile(Exception):
    """The file is not a DuckDB database, or a damaged one; the message says which (without the path)."""

    def __init__(self, reason: str, *, damaged: bool) -> None:
        self.damaged = damaged
        super().__init__(reason)


# DuckDB's words when another process holds the file. Matched whole: a damaged file's error says
# "checksum ... in block at location 4096", and "block" holds "lock".
_LOCK_ERROR = "Could not set lock on file"


def is_lock_error(exc: Exception) -> bool:
    """Whether DuckDB could not open the file because another process holds it."""
    return _LOCK_ERROR in str(exc)


def open_duckdb(database: str | Path = ":memory:", *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with :data:`NO_EXTENSIONS`: the only way the package connects."""
    import duckdb

    return duckdb.connect(str(database), read_only=read_only, config=dict(NO_EXTENSIONS))


@dataclass
class Held:
    """A DuckDB file this process has open once, however many connections use it; see :func:`hold`."""

    path: Path
    file: os.FileIO | None  # None: the file did not exist when held (DuckDB creates it)
    users: int = 1

    def let_go(self) -> None:
        """One user fewer; the last closes the file. Call it after closing the DuckDB connection."""
        with _HELD_LOCK:
            self.users -= 1
            if self.users == 0 and self.file is not None:
                _HELD.pop(_identity(self.file), None)
                self.file.close()

    def opened(self) -> os.FileIO:
        """The file, opened now if it was created since it was held (DuckDB holds it by then)."""
        with _HELD_LOCK:
            if self.file is None:
                self.file = open(self.path, "r+b", buffering=0)  # noqa: SIM115 - closed by let_go
                _HELD[_identity(self.file)] = self
            return self.file


_HELD: dict[tuple[int, int], Held] = {}
_HELD_LOCK = threading.Lock()


def _identity(file: os.FileIO) -> tuple[int, int]:
    status = os.fstat(file.fileno())
    return status.st_dev, status.st_ino


def hold(path: Path, *, writable: bool) -> Held:
    """``path`` opened once for this process, checked (:func:`check_file`) when first opened; each
    holder calls :meth:`Held.let_go` when done. A missing file is held empty until :meth:`Held.opened`."""
    with _HELD_LOCK:
        try:
            status = path.stat()
        except FileNotFoundError:
            return Held(path, None)
        held = _HELD.get((status.st_dev, status.st_ino))
        if held is not None:
            if writable and held.file is not None and not held.file.writable():
                raise OSError(errno.EBUSY, "it is open for reading in this process; close that first")
            held.users += 1
            return held
        if not path.is_file():
            raise BadFile("is not a regular file", damaged=False)
        file = open(path, "r+b" if writable else "rb", buffering=0)  # noqa: SIM115 - closed by let_go
        try:
            check_file(file)
        except BaseException:
            file.close()  # nothing holds the file yet, so closing it releases no lock
            raise
        held = Held(path, file)
        _HELD[_identity(file)] = held
        return held


def check_file(file: os.FileIO) -> None:
    """Raise :class:`BadFile` if ``file`` is not a DuckDB database or is cut short; read before DuckDB
    touches it (an empty file passes: DuckDB makes a new database of it).

    Cut short means shorter than its own header says, at a size no DuckDB file has (its data
    comes in whole blocks). A file cut at a block boundary passes here; DuckDB's own read then
    fails, and the caller words that (:func:`is_damage_error`)."""
    size = os.fstat(file.fileno()).st_size
    head = os.pread(file.fileno(), _HEADERS_SIZE, 0)
    if size == 0:
        return
    if head[:16].startswith(b"SQLite format 3\0"):
        raise BadFile("is a SQLite database, not a DuckDB file", damaged=False)
    if head[_MAGIC_OFFSET : _MAGIC_OFFSET + len(_MAGIC)] != _MAGIC:
        raise BadFile("is not a DuckDB file (no DuckDB header)", damaged=False)
    if size < _HEADERS_SIZE:
        raise BadFile(f"is damaged: truncated to {size:,} bytes, shorter than DuckDB's own headers", damaged=True)
    expected = _size_from_header(head)
    if expected is not None and size < expected[0] and (size - _HEADERS_SIZE) % expected[1]:
        raise BadFile(f"is damaged: truncated to {size:,} bytes of the {expected[0]:,} its header describes", damaged=True)


def _size_from_header(head: bytes) -> tuple[int, int] | None:
    """(the size the current database header describes, its block size), or None if the header
    does not look like one this check understands (another DuckDB storage version, say)."""
    headers = []
    for offset in (_HEADER_BLOCK, 2 * _HEADER_BLOCK):
        # After an 8-byte checksum: iteration, meta block, free list, block count, block size.
        iteration, _, _, block_count, block_size = struct.unpack_from("<5Q", head, offset + 8)
        headers.append((iteration, block_count, block_size))
    _, block_count, block_size = max(headers)
    if not (_HEADER_BLOCK <= block_size <= 1 << 28 and block_size & (block_size - 1) == 0 and block_count < 1 << 32):
        return None
    return _HEADERS_SIZE + block_count * block_size, block_size


def is_damage_error(exc: Exception) -> bool:
    """Whether DuckDB failed because the file is damaged (cut short, or its bytes altered)."""
    message = str(exc)
    return any(sign in message for sign in ("Could not read enough bytes", "Corrupt database file"))


def connect(
    path: Path, *, read_only: bool = False, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, wal: bool = True
) -> duckdb.DuckDBPyConnection:
    """A connection to ``path``, waiting for another process's lock; raises :class:`LockTimeout` after
    ``lock_timeout`` seconds, and any other ``duckdb.Error`` at once. Hold the file first (:func:`hold`),
    which refuses one that is not DuckDB's or is cut short.

    ``wal=False`` attaches the file without write-ahead logging: a commit then
    stays in memory until the caller's ``CHECKPOINT`` writes it (atomically, as
    every checkpoint is). DuckDB serialises a committed transaction into its
    log in one piece, which for a large write (a corpus of long conversations)
    costs about twice the data's size in memory; a checkpoint does not."""
    import duckdb

    deadline = time.monotonic() + lock_timeout
    delay = 0.05
    while True:
        try:
            if wal or read_only:
                return open_duckdb(path, read_only=read_only)
            return _attach_without_wal(path)
        except duckdb.Error as exc:
            if not is_lock_error(exc):
                raise
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LockTimeout(lock_timeout) from None
            time.sleep(min(remaining, delay * random.uniform(0.5, 1.0)))
            delay = min(delay * 2, 1.0)


def _attach_without_wal(path: Path) -> duckdb.DuckDBPyConnection:
    con = open_duckdb()
    try:
        literal = str(path).replace("'", "''")
        con.execute(f"ATTACH '{literal}' AS store (RECOVERY_MODE no_wal_writes)")
        con.execute("USE store")
    except BaseException:
        con.close()
        raise
    return con
