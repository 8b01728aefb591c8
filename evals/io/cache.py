"""The cache of slow or paid work: embeddings and LLM requests, by exact input.

It lives in its own DuckDB file beside the results store (``results.duckdb``
gets ``results.cache.duckdb``), not inside it: a run holds the cache open for
as long as it runs, and DuckDB lets no other process open a file that one
process writes, so a cache inside the store would lock readers and site builds
out for the length of every run. The results store stays opened only briefly.

Entries are written as soon as they are computed (each :meth:`Cache.put_many`
is its own transaction), so a run that fails half-way keeps what it paid for
and the retry is cheap. Entries are never updated: the first value stored for
a key is the value. The one exception is an entry its reader refuses (an LLM
reply cached by an older version that checked less): :meth:`Cache.discard`
removes it, so the value asked afresh can take its key.

A bad cache file is set aside, never used and never a traceback: one damaged (cut short, its bytes
altered), or whose table has other columns (a future version's, say), is renamed beside itself
(``cache.duckdb.bad-<time>``), said in one warning line, and a new one started, so what it held is
computed again. A file that is no cache at all (a results store named by ``$EVALS_CACHE``, any
DuckDB file with other tables, a file that is not DuckDB's) is refused, and left as it was.

A namespace says what kind of value it is and from where (``embedding:all-MiniLM-L6-v2``,
``embedding:text-embedding-3-small@https://api.openai.com/v1``, ``chat:https://api.openai.com/v1``);
the key is a digest of the exact input
(:func:`digest`). Values are bytes, so vectors and JSON bodies fit alike.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from evals.errors import EvalsError
from evals.io import locking
from evals.io.locking import DEFAULT_LOCK_TIMEOUT

if TYPE_CHECKING:
    import duckdb

# duckdb and pyarrow are imported on first use: they take a third of a second
# to load, and most runs (every baseline) never touch the cache.

__all__ = ["CACHE_ENV", "Cache", "CountedCache", "cache_path_for", "digest", "user_cache_path"]

# Python's last-resort handler prints a warning as its bare message on stderr when nobody configured logging.
log = logging.getLogger(__name__)

# Where a run without a store keeps its cache (python -m evals, evaluate() as a library): a file, or "off".
CACHE_ENV = "EVALS_CACHE"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache_entries (
    namespace VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    value BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (namespace, key)
);
"""
_TABLE = "cache_entries"
# (column, type) of the table as _SCHEMA makes it: a table of any other shape is not read.
_COLUMNS = [("namespace", "VARCHAR"), ("key", "VARCHAR"), ("value", "BLOB"), ("created_at", "TIMESTAMP")]


class _Unusable(EvalsError):
    """The cache file cannot be used as it is (damaged, or another shape): it is set aside and started afresh."""


def cache_path_for(store_path: str | Path) -> Path:
    """The cache file that belongs to a results store: ``x.duckdb`` -> ``x.cache.duckdb``."""
    store_path = Path(store_path)
    return store_path.with_name(f"{store_path.stem}.cache.duckdb")


def user_cache_path() -> Path | None:
    """The cache of runs that have no store (``python -m evals``, :func:`evals.run.evaluate.evaluate` called as
    a library): ``$EVALS_CACHE`` (a file; ``off``: none), else ``$XDG_CACHE_HOME/mneme-evals/cache.duckdb``,
    else ``~/.cache/mneme-evals/cache.duckdb``. Created on first use only: a run that embeds nothing with
    a slow model never touches it."""
    import os

    given = os.environ.get(CACHE_ENV, "")
    if given == "off":
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mneme-evals" / "cache.duckdb"


def digest(*parts: str | bytes) -> str:
    """A key for the exact input: sha256 over the parts, each length-prefixed so
    that ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class CountedCache:
    """What every cache shares, whatever keeps its entries (:class:`Cache` a file, a Ray worker's
    :class:`~evals.run.executors._worker_cache.WorkerCache` a snapshot): hits and misses counted per
    namespace for the run's report, the one-key forms of ``get_many`` and ``put_many``, and ``with``."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, bytes]:
        raise NotImplementedError

    def put_many(self, namespace: str, items: Mapping[str, bytes]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reader(self) -> CountedCache | None:
        """A view of this cache that another process may read at the same time as others, never writing (a
        forked player looking up what it would otherwise compute); None where there is no such view."""
        return None

    def _counted(self, namespace: str, wanted: list[str], found: dict[str, bytes]) -> dict[str, bytes]:
        """``found``, once each of the ``wanted`` keys is counted as a hit or a miss."""
        self.hits[namespace] += len(found)
        self.misses[namespace] += len(wanted) - len(found)
        return found

    def counts(self, kind: str) -> tuple[int, int]:
        """(hits, misses) over the namespaces of one kind, e.g. ``"embedding"`` or ``"chat"``."""
        prefix = f"{kind}:"
        hits = sum(n for namespace, n in self.hits.items() if namespace.startswith(prefix))
        misses = sum(n for namespace, n in self.misses.items() if namespace.startswith(prefix))
        return hits, misses

    def get(self, namespace: str, key: str) -> bytes | None:
        return self.get_many(namespace, [key]).get(key)

    def put(self, namespace: str, key: str, value: bytes) -> None:
        self.put_many(namespace, {key: value})

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Cache(CountedCache):
    """A thread-safe key-value cache in one DuckDB file; counts hits and misses
    per namespace for the run's report."""

    def __init__(self, path: Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        super().__init__()
        self.path = path
        self.lock_timeout = lock_timeout
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._held: locking.Held | None = None  # the file as this process holds it (evals.io.locking.hold)
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Cache:
        """The cache in the file ``path``. The file is opened (and created) on first
        use, so a run that caches nothing neither creates nor locks it. A run holds it
        while it runs; another process waits up to ``lock_timeout`` seconds for it, as
        for the store."""
        return cls(Path(path), lock_timeout=lock_timeout)

    def reader(self) -> CacheReader:
        return CacheReader(self.path)

    def _connect(self) -> duckdb.DuckDBPyConnection:
        # Called with the lock held.
        if self._connection is None:
            try:
                self._connection = self._open()
            except _Unusable as bad:
                self._set_aside(str(bad))
                self._connection = self._open()
        return self._connection

    def _open(self) -> duckdb.DuckDBPyConnection:
        """A connection to the cache, its table checked (or made); :class:`_Unusable` for a file to set aside,
        an :class:`EvalsError` for one to refuse."""
        import duckdb

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            held = locking.hold(self.path, writable=True)
        except locking.BadFile as exc:
            if exc.damaged:
                raise _Unusable(str(exc)) from None
            raise EvalsError(
                f"cache {self.path} {exc}; remove it (it only saves recomputing) or run with --no-cache"
            ) from None
        except OSError as exc:
            raise EvalsError(f"{self.path}: cannot open the cache: {exc}") from exc
        try:
            connection = locking.connect(self.path, lock_timeout=self.lock_timeout)
        except BaseException as exc:
            held.let_go()
            if isinstance(exc, locking.LockTimeout):
                raise EvalsError(
                    f"cache {self.path} is locked by another process (waited {self.lock_timeout:g} s), probably another "
                    "run using it; try again when it has finished, or run with --no-cache"
                ) from None
            if isinstance(exc, duckdb.Error):
                raise _unusable(exc) or EvalsError(f"{self.path}: cannot open the cache: {exc}") from exc
            raise
        try:
            self._check_tables(connection)
            connection.execute(_SCHEMA)
        except BaseException as exc:
            connection.close()
            held.let_go()
            if isinstance(exc, duckdb.Error):
                raise _unusable(exc) or EvalsError(f"{self.path}: cannot open the cache: {exc}") from exc
            raise
        self._held = held
        return connection

    def _check_tables(self, connection: duckdb.DuckDBPyConnection) -> None:
        """Refuse a file holding anything but the cache's table (before anything is written to it); a cache
        table of other columns is :class:`_Unusable`."""
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() ORDER BY 1"
        ).fetchall()
        others = [name for (name,) in tables if name != _TABLE]
        if others:
            listed = ", ".join(others[:4]) + (", …" if len(others) > 4 else "")
            raise EvalsError(
                f"cache {self.path} holds tables other than a cache's ({listed}): it is not a cache (a results store?), "
                "and is left as it was; name another file (in $EVALS_CACHE) or run with --no-cache"
            )
        if tables:
            columns = connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_catalog = current_database() AND table_name = ? ORDER BY ordinal_position",
                [_TABLE],
            ).fetchall()
            if [tuple(c) for c in columns] != _COLUMNS:
                shown = ", ".join(f"{name} {kind}" for name, kind in columns)
                raise _Unusable(f"has a cache table of other columns ({shown}), written by another version")

    def _set_aside(self, reason: str) -> None:
        """Rename the (closed) cache file beside itself, with its write-ahead log, and say so in one line."""
        assert self._connection is None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = self.path.with_name(f"{self.path.name}.bad-{stamp}")
        number = 1
        while target.exists():
            number += 1
            target = self.path.with_name(f"{self.path.name}.bad-{stamp}-{number}")
        try:
            os.rename(self.path, target)
        except FileNotFoundError:
            return  # another process set it aside first
        except OSError as exc:
            raise EvalsError(
                f"cache {self.path} {reason}, and cannot be set aside ({exc.strerror or exc}); "
                "remove it (it only saves recomputing) or run with --no-cache"
            ) from None
        wal = self.path.with_name(f"{self.path.name}.wal")
        if wal.exists():
            os.rename(wal, target.with_name(f"{target.name}.wal"))
        log.warning("warning: cache %s %s; set aside as %s, and what it held is computed again", self.path, reason, target)

    def _query(self, work: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        """``work`` done on the connection (called with the lock held); a cache found damaged on the way is set
        aside and ``work`` done again on a new one."""
        import duckdb

        try:
            return work(self._connect())
        except duckdb.Error as exc:
            bad = _unusable(exc)
            if bad is None:
                raise EvalsError(f"cache {self.path}: {exc}") from None
            self._disconnect()
            self._set_aside(str(bad))
            return work(self._connect())

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, bytes]:
        """The cached values among ``keys``; counts each key once as hit or miss."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        with self._lock:
            rows = self._query(lambda connection: _select(connection, namespace, wanted))
        return self._counted(namespace, wanted, rows)

    def put_many(self, namespace: str, items: Mapping[str, bytes]) -> None:
        """Store new entries in one transaction; keys already present keep their value."""
        if not items:
            return
        import pyarrow as pa

        table = pa.table(
            {
                "key": pa.array(list(items), pa.string()),
                "value": pa.array(list(items.values()), pa.binary()),
            }
        )
        now = datetime.now(UTC).replace(tzinfo=None)

        def insert(connection: duckdb.DuckDBPyConnection) -> None:
            cursor = connection.cursor()
            cursor.register("new_entries", table)
            cursor.execute(
                "INSERT INTO cache_entries SELECT ?, key, value, ? FROM new_entries ON CONFLICT DO NOTHING",
                [namespace, now],
            )
            cursor.close()

        with self._lock:
            self._query(insert)

    def discard(self, namespace: str, keys: Iterable[str]) -> None:
        """Remove the entries of ``keys`` (a value its reader found unusable)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return

        def delete(connection: duckdb.DuckDBPyConnection) -> None:
            cursor = connection.cursor()
            cursor.execute("DELETE FROM cache_entries WHERE namespace = ? AND list_contains(?, key)", [namespace, wanted])
            cursor.close()

        with self._lock:
            self._query(delete)

    def close(self) -> None:
        with self._lock:
            self._disconnect()

    def _disconnect(self) -> None:
        # Called with the lock held.
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._held is not None:
            self._held.let_go()  # after the connection, or DuckDB's lock would go with the file
            self._held = None


def _unusable(exc: Exception) -> _Unusable | None:
    """What DuckDB's error says is wrong with the file, if it is the file (damaged, or a storage version this
    DuckDB cannot read) rather than the moment."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "Could not read enough bytes" in first:
        return _Unusable("is damaged (cut short: it ends before data its own index points to)")
    if locking.is_damage_error(exc):
        return _Unusable("is corrupt (its bytes were altered: a block no longer matches its checksum)")
    if "version" in first.lower() and "database file" in first.lower():
        return _Unusable(f"cannot be read by this DuckDB ({first})")
    return None


def _select(connection: duckdb.DuckDBPyConnection, namespace: str, wanted: list[str]) -> dict[str, bytes]:
    """The entries of ``namespace`` among the keys ``wanted``."""
    import pyarrow as pa

    table = pa.table({"key": pa.array(wanted, pa.string())})
    cursor = connection.cursor()
    try:
        cursor.register("wanted_keys", table)
        rows = cursor.execute(
            "SELECT c.key, c.value FROM cache_entries c JOIN wanted_keys w ON c.key = w.key WHERE c.namespace = ?",
            [namespace],
        ).fetchall()
    finally:
        cursor.close()
    return {key: bytes(value) for key, value in rows}


class CacheReader(CountedCache):
    """A cache file read and never written, by one of several processes reading it at once (forked players
    each looking up their share's entries while the process that forked them holds no connection). Whatever
    keeps it from being read (no file yet, a writer holding it, damage) reads as an empty cache: the reader's
    caller computes what it lacks, and the cache's owner keeps it, as ever."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._unreadable = False

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        if wanted and not self._unreadable:
            import duckdb

            try:
                if self._connection is None:
                    if not self.path.is_file():
                        raise FileNotFoundError(self.path)
                    self._connection = locking.connect(self.path, read_only=True, lock_timeout=0)
                found = _select(self._connection, namespace, wanted)
            except (duckdb.Error, OSError, locking.LockTimeout):
                self._unreadable = True
                self.close()
        return self._counted(namespace, wanted, found)

    def put_many(self, namespace: str, items: Mapping[str, bytes]) -> None:
        raise EvalsError(f"cache {self.path} is open for reading only here; its owner keeps new entries")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
