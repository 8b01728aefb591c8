"""A hostile store file: a SQLite file, a truncated store, a full disk or the file size
limit; each is one line and leaves the store byte for byte as it was.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT
from helpers.cli import CORPUS_SMALL, evals
from helpers.errors import one_line_error
from helpers.stores import unchanged, undo_copy

from evals.store import Store

# -- the store file ----------------------------------------------------------


def sqlite_file(path: Path) -> Path:
    """A real SQLite database (one table) at ``path``."""
    import sqlite3

    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE runs (run_id TEXT)")
    con.close()
    return path


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"], ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL]])
def test_sqlite_file_as_the_store_is_refused_before_duckdb_reads_it(tmp_path, command):
    """A SQLite file given as --store is refused in one line naming it, with no extension fetched; it is unchanged."""
    store = sqlite_file(tmp_path / "results.duckdb")
    with unchanged(store):
        line = one_line_error(evals(*command, "--store", store))
    assert line == f"Error: {store} is a SQLite database, not a DuckDB file, so not an evals store; refusing to use it"


def test_no_duckdb_connection_fetches_or_loads_an_extension(tmp_path, store):
    """Every DuckDB connection the package opens (store, cache, a Ray worker's cache reader) has automatic
    extension install and load turned off."""
    from evals.io.cache import Cache

    def settings(con) -> tuple:
        query = "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
        return con.execute(query).fetchall()[0]

    for read_only in (True, False):
        with Store.open(store, read_only=read_only) as opened:
            assert settings(opened._con) == (False, False)
    with Cache.open(tmp_path / "c.cache.duckdb") as cache:
        cache.put("embedding:m", "k", b"v")
        assert settings(cache._connect()) == (False, False)
    reader = Cache.open(tmp_path / "c.cache.duckdb").reader()
    assert reader.get_many("embedding:m", ["k"]) == {"k": b"v"}
    assert settings(reader._connection) == (False, False)


def test_duckdb_is_only_connected_through_one_function():
    """No module calls duckdb.connect but evals/io/locking.py, whose open_duckdb sets the no-extension settings."""
    package = ROOT / "evals"
    calls = [
        p.relative_to(package).as_posix() for p in package.rglob("*.py") if "duckdb.connect(" in p.read_text(encoding="utf-8")
    ]
    assert calls == ["io/locking.py"]


def truncated(store: Path, size: int) -> Path:
    """``store`` cut to its first ``size`` bytes (a negative size: that many blocks of 256 KiB off its end)."""
    data = store.read_bytes()
    store.write_bytes(data[: size if size >= 0 else len(data) + size * 262_144])
    return store


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"], ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL]])
@pytest.mark.parametrize("size", [5_000, 20_000, "half"])
def test_truncated_store_is_one_line_saying_so(store, command, size):
    """A store cut short at any byte is refused in one line naming it as damaged and saying to restore it; it is unchanged."""
    truncated(store, store.stat().st_size // 2 if size == "half" else size)
    with unchanged(store):
        line = one_line_error(evals(*command, "--store", store))
    assert line.startswith(f"Error: store {store} is damaged") and line.endswith(
        "restore it from a copy (nothing was written to it)"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["runs"],
        ["export", "RUN"],
        ["build-site", "--out", "SITE"],
        ["run", "--runner", "full_history", "--corpus", FIXTURES / "site_corpus"],
    ],
)
def test_store_cut_at_a_block_boundary_is_one_line_saying_so(tmp_path, store, command):
    """A store cut where a block ends (which its size alone does not give away) is one line when DuckDB
    finds the data missing, for reads and appends alike; it is unchanged."""

    with Store.open(store, read_only=True) as opened:
        run_id = opened.runs()[0].run_id
    truncated(store, -6)
    args = [run_id if a == "RUN" else tmp_path / "site" if a == "SITE" else a for a in command]
    with unchanged(store):
        line = one_line_error(evals(*args, "--store", store))
    assert line.startswith(f"Error: store {store} is damaged (cut short") and "restore it from a copy" in line


@pytest.fixture
def small_disk(tmp_path):
    """A real 8 MB filesystem (tmpfs) to fill up; skipped where mounting one is not permitted."""
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def fill(disk: Path, leave: int) -> None:
    """Fill ``disk`` but for about ``leave`` bytes."""
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * (free - leave))


@pytest.mark.parametrize(
    "room, said",
    [
        ("for the copy, not the run", "the disk is full; the store is unchanged"),  # DuckDB's checkpoint fails part-way
        ("not even for the copy", "no room beside it for the copy"),  # refused before DuckDB writes
    ],
)
def test_append_on_a_full_disk_leaves_the_store_byte_identical(small_disk, room, said):
    """An append that runs out of disk is one line and leaves the store byte for byte as it was, with no WAL
    (nor anything else) left beside it."""
    store = small_disk / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    fill(small_disk, store.stat().st_size + 64 * 1024 if room == "for the copy, not the run" else 64 * 1024)
    listing = sorted(p.name for p in small_disk.iterdir())
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", "full_history", "--corpus", FIXTURES / "site_corpus", "--store", store, "--no-cache")
        )
    assert line.startswith(f"Error: cannot write to store {store}: ") and said in line
    assert sorted(p.name for p in small_disk.iterdir()) == listing


def test_append_past_the_file_size_limit_leaves_the_store_byte_identical(store):
    """An append that the file size limit stops part-way (RLIMIT_FSIZE: EFBIG, no root needed) is one line
    and leaves the store byte for byte as it was, with no WAL."""
    import resource
    import subprocess
    import sys

    limit = store.stat().st_size + 64 * 1024
    listing = sorted(p.name for p in store.parent.iterdir())
    with unchanged(store):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "evals",
                "run",
                "--runner",
                "full_history",
                "--corpus",
                str(FIXTURES / "site_corpus"),
                "--store",
                str(store),
                "--no-cache",
            ],
            capture_output=True,
            text=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),  # Python ignores SIGXFSZ
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert f"Error: cannot write to store {store}: " in done.stderr and "unchanged" in done.stderr
    assert sorted(p.name for p in store.parent.iterdir()) == listing


def test_leftover_copy_of_a_killed_write_is_removed_by_the_next_append(store):
    """The copy a write keeps beside the store (left there if the writer was killed) goes at the next writable open."""
    undo_copy(store).write_bytes(store.read_bytes())
    assert evals("run", "--runner", "full_history", "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    assert not undo_copy(store).exists()


def test_migration_on_a_full_disk_leaves_the_store_byte_identical(small_disk):
    """Upgrading an older store on a disk too full for the new schema is one line; the store is byte for byte as it was."""
    import gzip

    store = small_disk / "results.duckdb"
    store.write_bytes(gzip.decompress((FIXTURES / "stores" / "schema5.duckdb.gz").read_bytes()))
    fill(small_disk, store.stat().st_size + 64 * 1024)
    with unchanged(store):
        line = one_line_error(evals("migrate", "--store", store))
    assert (
        line.startswith(f"Error: cannot upgrade store {store} to schema ") and "the disk is full; the store is unchanged" in line
    )
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "results.duckdb"]


def test_new_store_on_a_full_disk_is_not_left_half_made(small_disk):
    """Creating a store on a disk too full for its schema is one line, and leaves no file behind."""
    fill(small_disk, 64 * 1024)
    line = one_line_error(
        evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", small_disk / "new.duckdb", "--no-cache")
    )
    assert "the disk is full" in line
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def flipped(path: Path, offset: int = 4096 + 40, length: int = 8) -> Path:
    """``path`` with ``length`` bytes inverted at ``offset`` (by default inside its first database header)."""
    with open(path, "r+b") as file:
        file.seek(offset)
        data = file.read(length)
        file.seek(offset)
        file.write(bytes(b ^ 0xFF for b in data))
    return path


@pytest.mark.parametrize("command", [["runs"], ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL]])
def test_a_corrupt_store_says_corrupt_not_locked(store, command):
    """A store whose bytes were altered is refused at once in one line saying it is corrupt, never "locked"; it is unchanged."""
    import time

    flipped(store)
    started = time.monotonic()
    with unchanged(store):
        line = one_line_error(evals(*command, "--store", store))
    assert time.monotonic() - started < 20, "waited for a lock no one holds"
    assert line.startswith(f"Error: store {store} is corrupt") and "locked" not in line, line
