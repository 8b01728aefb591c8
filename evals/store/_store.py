"""The store: one DuckDB file, opened briefly, appended to in one transaction per write.

:class:`Store` opens (and creates, and migrates) the file; what it can do once
open lives beside it: reading in ``_read.py``, writing in ``_write.py``, the
connection and the checks made before DuckDB touches the file in
``_connect.py``.

The code never updates or deletes a result: a run is inserted whole, in one
transaction, or not at all (see ``_write.py`` for how that holds across a
crash, SIGKILL or a full disk).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

import duckdb

from evals.store._connect import (
    DEFAULT_LOCK_TIMEOUT,
    MEMORY_LIMIT,
    applied_migrations,
    close,
    connect,
    read_error,
    rollback,
    utc_now,
    writable_directory,
    write_error,
)
from evals.store._errors import StoreError
from evals.store._read import StoreReader
from evals.store._schema import MIGRATIONS, SCHEMA_TABLE, Migration, current_version
from evals.store._undo import creation_prefix, kept_on_failure, remove_leftover_copy
from evals.store._write import StoreWriter

__all__ = ["MIGRATION_MEMORY_LIMIT", "Store"]

MIGRATION_MEMORY_LIMIT = "1GB"  # DuckDB's buffer pool while migrating, first (see Store._migrate)


def _create_error(path: Path, exc: OSError) -> StoreError:
    if exc.errno == errno.ENOSPC:
        return StoreError(f"cannot create store {path}: the disk is full (nothing was created)")
    return StoreError(f"cannot create store {path}: {exc.strerror or exc}")


class Store(StoreReader, StoreWriter):
    """An open results store. Use :meth:`open` as a context manager; it closes on exit."""

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        read_only: bool = False,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        create_parent: bool = False,
        migrations: tuple[Migration, ...] = MIGRATIONS,
    ) -> Store:
        """Open (and, unless ``read_only``, create) the store at ``path``.

        A missing file is created with the current schema; an older schema is
        migrated by a writable open, and refused by a read-only one (reading
        never writes: :meth:`upgrade` or any writable open upgrades it); a
        newer one, a file that is not DuckDB, or a DuckDB file that holds other
        tables is refused with a :class:`StoreError`, and the file is left as
        it was. A missing parent directory is an error unless ``create_parent``.
        """
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"store path {path} is a directory; give a file such as {path / 'results.duckdb'}")
        if not path.exists():
            if path.is_symlink():  # DuckDB would create the store wherever the link points
                raise StoreError(f"store path {path} is a symbolic link to {os.readlink(path)}, which does not exist")
            if read_only:
                raise StoreError(f"no store at {path} (nothing has been stored there yet)")
            writable_directory(path.parent, create_parent)
            cls._create(path, lock_timeout, migrations)
        con, held = connect(path, read_only, lock_timeout)
        try:
            version = cls._check_version(con, path, migrations)
            if version == 0 and read_only:
                raise StoreError(f"{path} is an empty DuckDB database, not an evals store yet")
            newest = current_version(migrations)
            if version < newest:
                if read_only:
                    raise StoreError(
                        f"store {path} has schema version {version}; this evals needs {newest}. "
                        f"Upgrade it with: evals migrate --store {path} (any run or import also upgrades it)"
                    )
                with kept_on_failure(path, held.opened()):
                    cls._migrate(con, path, version, migrations)
            if not read_only:
                remove_leftover_copy(path)
        except BaseException:
            close(con)
            held.let_go()
            raise
        return cls(con, held, path, read_only=read_only)

    @classmethod
    def _create(cls, path: Path, lock_timeout: float, migrations: tuple[Migration, ...]) -> None:
        """Make a new store at ``path``, whole or not at all, without ever touching a file another
        process put there: it is built in a folder of this process's own (made with ``mkdtemp``, so
        nothing can be planted in it), then hard-linked into place, which fails rather than replace a
        store another process made meanwhile (that one is then used). A failure leaves nothing behind;
        so does success, but for the store itself (the folder goes). A killed builder's folder is
        removed by the next writable open (:func:`~evals.store._undo.remove_leftover_copy`)."""
        try:
            folder = Path(tempfile.mkdtemp(prefix=creation_prefix(path), dir=path.parent))
        except OSError as exc:
            raise _create_error(path, exc) from None
        try:
            made = folder / path.name
            con, held = connect(made, False, lock_timeout)
            try:
                cls._migrate(con, path, 0, migrations)
            finally:
                close(con)
                held.let_go()
            try:
                os.link(made, path)
            except FileExistsError:
                pass  # another process made the store meanwhile: its store is the one used
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                    raise
                # No hard links on this file system: a rename, unless a store appeared (a narrow race, said in store.md).
                if not path.exists():
                    os.rename(made, path)
        except OSError as exc:
            raise _create_error(path, exc) from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @classmethod
    def schema_versions(
        cls,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        migrations: tuple[Migration, ...] = MIGRATIONS,
    ) -> tuple[int, int]:
        """The existing store's schema version and this evals' (the newest), read without changing
        anything; a file that is not a store of ours, or is newer, is refused (:class:`StoreError`)."""
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"store path {path} is a directory; give a file such as {path / 'results.duckdb'}")
        if not path.exists():
            raise StoreError(f"no store at {path} (nothing has been stored there yet)")
        con, held = connect(path, True, lock_timeout)
        try:
            return cls._check_version(con, path, migrations), current_version(migrations)
        finally:
            close(con)
            held.let_go()

    @classmethod
    def upgrade(
        cls,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        migrations: tuple[Migration, ...] = MIGRATIONS,
    ) -> tuple[int, int]:
        """Migrate the existing store at ``path`` to the current schema; return its
        (old, new) schema versions. A store already current is only read, never written."""
        version, newest = cls.schema_versions(path, lock_timeout=lock_timeout, migrations=migrations)
        if version < newest:
            with cls.open(path, lock_timeout=lock_timeout, migrations=migrations):
                pass
        return version, newest

    @staticmethod
    def _check_version(con: duckdb.DuckDBPyConnection, path: Path, migrations: tuple[Migration, ...]) -> int:
        try:
            applied = applied_migrations(con)
        except duckdb.Error as exc:
            raise read_error(path, exc) from None
        if applied is None:
            raise StoreError(
                f"{path} is a DuckDB database but not an evals store (no {SCHEMA_TABLE} table); refusing to change it"
            )
        version = applied[-1][0] if applied else 0
        newest = current_version(migrations)
        if version > newest:
            raise StoreError(
                f"store {path} has schema version {version}, newer than this evals understands ({newest}); "
                "upgrade mneme-evals to use it"
            )
        known = {m.version: m.name for m in migrations}
        for number, name in applied:
            if known.get(number) != name:
                raise StoreError(
                    f"store {path} has migration {number} {name!r}, which this evals does not know "
                    f"(expected {known.get(number)!r}); it was written by a pre-release or foreign schema"
                )
        return version

    @staticmethod
    def _migrate(con: duckdb.DuckDBPyConnection, path: Path, version: int, migrations: tuple[Migration, ...]) -> None:
        # Over the usual limit (_connect.MEMORY_LIMIT): a migration reads what older schemas kept, which
        # can be a whole corpus's turns as list values that DuckDB unpacks together (schema 12 moves them:
        # 1.0 GB for a 100-question LongMemEval_m corpus under this limit, 1.7 GB without). A corpus bigger
        # still is moved without a limit rather than not at all.
        try:
            con.execute(f"SET memory_limit = '{MIGRATION_MEMORY_LIMIT}'")
            try:
                Store._apply(con, path, version, migrations)
            except StoreError as exc:
                if "Out of Memory" not in str(exc):
                    raise
                con.execute("RESET memory_limit")
                Store._apply(con, path, Store._check_version(con, path, migrations), migrations)
        finally:
            con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")

    @staticmethod
    def _apply(con: duckdb.DuckDBPyConnection, path: Path, version: int, migrations: tuple[Migration, ...]) -> None:
        for migration in migrations:
            if migration.version <= version:
                continue
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute(migration.sql)
                con.execute(
                    f"INSERT INTO {SCHEMA_TABLE} VALUES (?, ?, ?)",
                    [migration.version, migration.name, utc_now()],
                )
                con.execute("COMMIT")
                con.execute("CHECKPOINT")
            except duckdb.Error as exc:
                rollback(con)
                raise write_error(path, exc, f"upgrade store {path} to schema {migration.version} ({migration.name})") from None

    def use_threads(self, threads: int) -> None:
        """Run this connection's queries on at most ``threads`` threads: a read of many turns' texts takes
        less memory (and no more time, on two cores) on one."""
        self._con.execute(f"SET threads = {int(threads)}")

    def close(self) -> None:
        if not self.read_only and not self._failed:
            try:  # whatever committed outside _transaction (nothing should) reaches the file too
                self._con.execute("CHECKPOINT")
            except duckdb.Error:
                pass
        close(self._con)
        self._held.let_go()  # after the connection: closing the file any earlier would drop DuckDB's lock

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self._one(f"SELECT max(version) FROM {SCHEMA_TABLE}")[0]
