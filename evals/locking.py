"""Opening a DuckDB file that another process may hold: wait with jittered backoff, then give up.

DuckDB admits one writer process, and while it holds a file no other process
can open it at all. The results store and the cache beside it both open
through :func:`connect`, so both wait for the lock the same way and both give
up after ``lock_timeout`` seconds with an error their caller words.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

__all__ = ["DEFAULT_LOCK_TIMEOUT", "LockTimeout", "connect", "is_lock_error"]

DEFAULT_LOCK_TIMEOUT = 30.0


class LockTimeout(Exception):
    """Another process held the file for all of ``waited`` seconds; the caller says what that means."""

    def __init__(self, waited: float) -> None:
        self.waited = waited
        super().__init__(f"locked for {waited:g} s")


def is_lock_error(exc: Exception) -> bool:
    return "lock" in str(exc).lower()


def connect(
    path: Path, *, read_only: bool = False, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, wal: bool = True
) -> duckdb.DuckDBPyConnection:
    """A connection to ``path``, waiting for another process's lock; raises :class:`LockTimeout`
    after ``lock_timeout`` seconds, and any other ``duckdb.Error`` at once.

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
                return duckdb.connect(str(path), read_only=read_only)
            return _attach_without_wal(duckdb, path)
        except duckdb.Error as exc:
            if not is_lock_error(exc):
                raise
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LockTimeout(lock_timeout) from None
            time.sleep(min(remaining, delay * random.uniform(0.5, 1.0)))
            delay = min(delay * 2, 1.0)


def _attach_without_wal(duckdb, path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    try:
        literal = str(path).replace("'", "''")
        con.execute(f"ATTACH '{literal}' AS store (RECOVERY_MODE no_wal_writes)")
        con.execute("USE store")
    except BaseException:
        con.close()
        raise
    return con
