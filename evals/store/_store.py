"""The store: one DuckDB file, opened briefly, appended to in one transaction per write.

DuckDB admits one writer process, and while it holds the file no other
process can open it at all, not even to read. So callers compute first and
open the store only for a short read or write; :meth:`Store.open` waits for
the lock with bounded, jittered backoff and then gives up with a clear error.

The code never updates or deletes a result: a run is inserted whole, in one
transaction, or not at all (DuckDB's write-ahead log makes that hold across a
crash or SIGKILL too).
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from evals import locking
from evals.corpus import Reference
from evals.metrics import LatencyBucket, MetricValue, metric_order
from evals.provenance import SCRATCH_PREFIX, Provenance
from evals.results import PREFIX, AnswerRun, ConversationResult, Evaluation, PointAnswer, RunResult, TestPointResult
from evals.retrieval import sessions_of
from evals.scoring import PointScore, Scores, evidence_hits, score_point
from evals.store._errors import CorpusConflict, StoreError
from evals.store._models import RunSummary, StoredRun
from evals.store._records import (
    RunRecord,
    answers_table,
    CORPUS_BATCH,
    RUN_BATCH,
    corpus_points,
    corpus_rows,
    decode_records,
    decode_tokens,
    gc_paused,
    latency_table,
    metrics_table,
    references_table,
    record_from_evaluation,
    run_tables,
)
from evals.store._schema import MIGRATIONS, SCHEMA_TABLE, Migration, current_version

if TYPE_CHECKING:
    from evals.corpus import Conversation

__all__ = ["DEFAULT_LOCK_TIMEOUT", "Store", "check_writable", "writable_file"]

DEFAULT_LOCK_TIMEOUT = locking.DEFAULT_LOCK_TIMEOUT

# Stored by runs with answers, NULL for the others (migration 5).
_ANSWER_COLUMNS = (
    "answer_model",
    "judge_model",
    "llm_base_url",
    "llm_settings",
    "answers_total",
    "answers_judged",
    "answers_correct",
    "answers_keyword_hits",
    "answer_latency_s",
    "llm_requests_made",
    "llm_requests_cached",
    "llm_prompt_tokens",
    "llm_completion_tokens",
)
_SUMMARY_COLUMNS = (
    "run_id",
    "commit",
    "dirty",
    "model",
    "date",
    "timestamp",
    "strategy",
    "strategy_config",
    "config_key",
    "k",
    "seed",
    "corpus_name",
    "corpus_dir",
    "corpus_digest",
    "tokenizer",
    "package_version",
    "mneme_version",
    "python_version",
    "duration_s",
    "conversation_count",
    "hits",
    "total",
    "recall",
    "context_tokens",
    "cache_key",  # the reuse key (RunSummary.reuse_key); the column keeps its first name
    "cache_hits",
    "cache_misses",
    "strategy_source",
    "cutoffs",
    "cutoff_rule",
    *_ANSWER_COLUMNS,
)
_SELECT_SUMMARY = ", ".join(f'"{c}"' for c in _SUMMARY_COLUMNS)
_POINT_COLUMNS = 'conversation_id, turn_index, hit, strict_hit, "rank", record_turns, record_texts, text_tokens, source_turns, ranked_turns'
# The same, with the record texts left out (empty): Store.iter_run reads them apart.
_POINT_COLUMNS_NO_TEXTS = _POINT_COLUMNS.replace("record_texts", "[]::VARCHAR[] AS record_texts")
# Conversation ids -> each one's turn texts, for Store.iter_run.
ContentsSource = Callable[[Sequence[str]], dict[str, list[str]]]


def _open_error(path: Path, exc: duckdb.Error) -> StoreError:
    message = str(exc)
    if "not a valid DuckDB database file" in message:
        return StoreError(f"{path} is not a DuckDB file, so not an evals store; refusing to use it")
    reason = message.split(":", 1)[-1].strip() if message.startswith(("IO Error", "IOException")) else message
    return StoreError(f"cannot open store {path}: {reason}")


def _connect(path: Path, read_only: bool, lock_timeout: float) -> duckdb.DuckDBPyConnection:
    """Connect, waiting for another process's lock (:func:`evals.locking.connect`)."""
    try:
        # Writes go without DuckDB's write-ahead log and are checkpointed as they commit
        # (see _transaction): logging a corpus of long conversations doubled the memory it took.
        con = locking.connect(path, read_only=read_only, lock_timeout=lock_timeout, wal=False)
        if not read_only:
            # DuckDB's allocator keeps what a query freed for the next; an append's steps (the
            # corpus comparison, the rows, the checkpoint) each free hundreds of megabytes, which
            # then stack up. Its background threads hand them back to the system as they go.
            con.execute("SET allocator_flush_threshold = '32MB'")
            con.execute("SET allocator_background_threads = true")
        return con
    except locking.LockTimeout:
        raise StoreError(
            f"store {path} is locked by another process (waited {lock_timeout:g} s); "
            "try again when that process has finished"
        ) from None
    except duckdb.Error as exc:
        raise _open_error(path, exc) from None


def _applied_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str]] | None:
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


def _writable_directory(directory: Path, create: bool) -> None:
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
    probe = directory / f"{SCRATCH_PREFIX}write-probe-{os.getpid()}"
    try:
        probe.touch()
        probe.unlink()
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
    _writable_directory(path.parent, create_parent and not path.exists())


class Store:
    """An open results store. Use :meth:`open` as a context manager; it closes on exit."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool) -> None:
        self._con = con
        self.path = path
        self.read_only = read_only

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
            if read_only:
                raise StoreError(f"no store at {path} (nothing has been stored there yet)")
            _writable_directory(path.parent, create_parent)
        con = _connect(path, read_only, lock_timeout)
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
                cls._migrate(con, path, version, migrations)
        except BaseException:
            con.close()
            raise
        return cls(con, path, read_only=read_only)

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
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"store path {path} is a directory; give a file such as {path / 'results.duckdb'}")
        if not path.exists():
            raise StoreError(f"no store at {path} (nothing has been stored there yet)")
        con = _connect(path, True, lock_timeout)
        try:
            version = cls._check_version(con, path, migrations)
        finally:
            con.close()
        newest = current_version(migrations)
        if version < newest:
            with cls.open(path, lock_timeout=lock_timeout, migrations=migrations):
                pass
        return version, newest

    @staticmethod
    def _check_version(con: duckdb.DuckDBPyConnection, path: Path, migrations: tuple[Migration, ...]) -> int:
        applied = _applied_migrations(con)
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
        for migration in migrations:
            if migration.version <= version:
                continue
            try:
                con.execute("BEGIN TRANSACTION")
                con.execute(migration.sql)
                con.execute(
                    f"INSERT INTO {SCHEMA_TABLE} VALUES (?, ?, ?)",
                    [migration.version, migration.name, _utc_now()],
                )
                con.execute("COMMIT")
                con.execute("CHECKPOINT")
            except duckdb.Error as exc:
                _rollback(con)
                raise StoreError(f"cannot upgrade store {path} to schema {migration.version} ({migration.name}): {exc}") from None

    def use_threads(self, threads: int) -> None:
        """Run this connection's queries on at most ``threads`` threads. Reading the corpus texts column,
        which DuckDB decompresses whole, takes less memory (and no more time, on two cores) on one."""
        self._con.execute(f"SET threads = {int(threads)}")

    def close(self) -> None:
        if not self.read_only:
            try:  # whatever committed outside _transaction (nothing should) reaches the file too
                self._con.execute("CHECKPOINT")
            except duckdb.Error:
                pass
        self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self._one(f"SELECT max(version) FROM {SCHEMA_TABLE}")[0]

    # -- writing -------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        if self.read_only:
            raise StoreError(f"store {self.path} was opened read-only")
        self._con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            _rollback(self._con)
            raise
        release_memory()
        try:
            self._con.execute("COMMIT")
            # Without a write-ahead log (_connect) the commit is in memory only; the checkpoint
            # writes it to the file, all of it or (killed part-way) none of it.
            self._con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            _rollback(self._con)
            raise StoreError(f"cannot write to store {self.path}: {exc}") from None

    def append(
        self,
        evaluation: Evaluation,
        provenance: Provenance,
        *,
        cache_hits: int | None = None,
        cache_misses: int | None = None,
    ) -> str:
        """Add one run, in one transaction; return its new run id. ``cache_hits``/``cache_misses``:
        what the run found in the embedding cache and computed (None: it used none)."""
        record = record_from_evaluation(evaluation, provenance, cache_hits=cache_hits, cache_misses=cache_misses)
        self.write_records([record])
        return record.summary.run_id

    def write_records(self, records: Sequence[RunRecord]) -> list[bool]:
        """Add runs in one transaction, skipping run ids already present; return which were added."""
        added: list[bool] = []
        try:
            with gc_paused(), self._transaction():
                known = set(self._existing_run_ids([r.summary.run_id for r in records]))
                for record in records:
                    if record.summary.run_id in known:
                        added.append(False)
                        continue
                    self._insert_run(record)
                    known.add(record.summary.run_id)
                    added.append(True)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path}: {exc}") from None
        return added

    def _existing_run_ids(self, run_ids: list[str]) -> list[str]:
        rows = self._con.execute("SELECT run_id FROM runs WHERE list_contains(?, run_id)", [run_ids]).fetchall()
        return [row[0] for row in rows]

    def _insert_run(self, record: RunRecord) -> None:
        self._insert_corpus(record)
        self._drop_cached_blocks()
        release_memory()
        summary = record.summary
        values = {name: getattr(summary, name) for name in _SUMMARY_COLUMNS if name != "cache_key"}
        values["cache_key"] = summary.reuse_key
        if summary.answer_model is None:
            # A run without answers writes none of their columns (so older schemas take it too).
            values = {name: value for name, value in values.items() if name not in _ANSWER_COLUMNS}
        values["strategy_config"] = json.dumps(summary.strategy_config, ensure_ascii=False)
        if summary.llm_settings is not None:
            values["llm_settings"] = json.dumps(summary.llm_settings, ensure_ascii=False, sort_keys=True)
        values["timestamp"] = summary.timestamp.astimezone(UTC).replace(tzinfo=None)
        values["appended_at"] = _utc_now()
        # A store opened with fewer migrations (tests build old stores so) has fewer columns.
        have = self._columns("runs")
        values = {name: value for name, value in values.items() if name in have}
        columns = ", ".join(f'"{name}"' for name in values)
        marks = ", ".join("?" for _ in values)
        self._con.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(values.values()))
        # Encoded and inserted a batch of conversations at a time, after the corpus: records that
        # are not turns (summary_buffer's summaries of long conversations) run to hundreds of megabytes.
        count = len(record.run.conversations)
        for begin in range(0, count, RUN_BATCH):
            points, turn_tokens = run_tables(record, begin, begin + RUN_BATCH)
            self._insert_arrow("test_points", points)
            self._insert_arrow("run_turn_tokens", turn_tokens)
            del points, turn_tokens
            release_memory()
        self._drop_cached_blocks()
        tables = self._tables()
        if "run_metrics" in tables:  # a store opened with fewer migrations has none
            self._insert_arrow("run_metrics", metrics_table(record))
        if "run_latency" in tables:
            self._insert_arrow("run_latency", latency_table(record))
        if "corpus_references" in tables and record.references:
            self._con.execute("DELETE FROM corpus_references WHERE corpus_digest = ?", [record.summary.corpus_digest])
            self._insert_arrow("corpus_references", references_table(record))
        answers = answers_table(record)
        if answers is not None:
            self._insert_arrow("test_point_answers", answers)

    def _drop_cached_blocks(self) -> None:
        """Let DuckDB's buffer pool go of what it need not hold: blocks it read (the stored corpus,
        when compared) and this transaction's rows, which go to its temporary file until the
        checkpoint writes them. Lowering the memory limit evicts them; the limit goes straight back
        (never lowered while a checkpoint needs room)."""
        (limit,) = self._one("SELECT current_setting('memory_limit')")
        try:
            self._con.execute("SET memory_limit = '16MB'")
        except duckdb.Error:
            pass  # more is pinned than that (rows of this transaction): nothing to gain
        finally:
            self._con.execute(f"SET memory_limit = '{limit}'")

    def _insert_corpus(self, record: RunRecord) -> None:
        """Store the run's corpus unless a run on the same corpus digest already did; then the
        stored one must be the same, turn for turn, or the run is refused (:class:`CorpusConflict`):
        pages show a run's transcripts from the corpus stored under its digest, so a different text
        there would put one run's words into another's pages.

        Conversations go in, and are compared, a batch at a time: a corpus of long conversations
        is hundreds of megabytes of text, and a copy of all of it (let alone two, as Python
        lists) would be most of a run's memory."""
        digest = record.summary.corpus_digest
        conversations = record.conversations
        test_points = corpus_points(digest, conversations)
        stored_count = self._one("SELECT count(*) FROM conversations WHERE corpus_digest = ?", [digest])[0]
        if stored_count == 0:
            for begin in range(0, len(conversations), CORPUS_BATCH):
                rows = corpus_rows(digest, conversations[begin : begin + CORPUS_BATCH], offset=begin)
                self._insert_arrow("conversations", rows)
                del rows
            self._insert_arrow("corpus_test_points", test_points)
            return
        difference = self._stored_corpus_difference(digest, conversations, test_points, stored_count)
        if difference is not None:
            raise CorpusConflict(
                record.summary.run_id,
                f"run {record.summary.run_id} is on corpus {digest[:12]}, but the store holds different text under "
                f"that digest ({difference}); refusing to mix them",
            )

    def _stored_corpus_difference(
        self, digest: str, conversations: Sequence[Conversation], test_points: pa.Table, stored_count: int
    ) -> str | None:
        """Where the corpus stored under ``digest`` first differs from ``conversations``; None when the same."""
        # A store opened with fewer migrations (tests build old stores so) compares the columns it has.
        have = self._columns("conversations")
        columns = [c for c in ("conversation_id", "description", "roles", "contents", "unrecorded") if c in have]
        ids = [row[0] for row in self._con.execute(
            "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [digest]
        ).fetchall()]
        if ids != [c.id for c in conversations]:
            return "other conversations"
        # Fingerprints, not texts: DuckDB reads a list column a whole vector of rows at a time, so
        # any scan of `contents` unpacks the corpus's text at once; digesting it there keeps that
        # inside one query instead of copying it into Python as well. Only a conversation whose
        # fingerprint differs is read back whole, to say where it differs.
        fingerprint = _fingerprint_sql(columns)
        stored = dict(
            self._con.execute(
                f"SELECT position, {fingerprint} FROM conversations WHERE corpus_digest = ?", [digest]
            ).fetchall()
        )
        for begin in range(0, len(conversations), CORPUS_BATCH):
            new_rows = corpus_rows(digest, conversations[begin : begin + CORPUS_BATCH], offset=begin)  # noqa: F841
            given = self._con.execute(f"SELECT position, {fingerprint} FROM new_rows").fetchall()
            for position, value in given:
                if stored.get(position) == value:
                    continue
                old = self._arrow(
                    f"SELECT {', '.join(columns)} FROM conversations WHERE corpus_digest = ? AND position = ?",
                    [digest, position],
                )
                new = corpus_rows(digest, [conversations[position]], offset=position).select(old.column_names)
                difference = _corpus_difference(old.to_pylist(), new.to_pylist(), [], [])
                if difference is not None:
                    return difference
        have = self._columns("corpus_test_points")
        point_columns = [
            "coalesce(answerable, true) AS answerable" if c == "answerable" else c
            for c in ("conversation_id", "turn_index", "question", "expected_fact", "expected_keywords", "evidence_turns", "category", "answerable")
            if c in have
        ]
        stored_points = self._arrow(
            f"SELECT {', '.join(point_columns)} FROM corpus_test_points WHERE corpus_digest = ? "
            "ORDER BY conversation_id, turn_index",
            [digest],
        )
        return _corpus_difference(
            [],
            [],
            stored_points.to_pylist(),
            sorted(test_points.select(stored_points.column_names).to_pylist(), key=lambda r: (r["conversation_id"], r["turn_index"])),
        )

    def _insert_arrow(self, table: str, rows: pa.Table) -> None:
        # A store opened with an older migration list (tests make such stores) lacks the newer
        # columns; it gets the columns it has, as the evals of that schema wrote them.
        have = self._columns(table)
        new_rows = rows.select([c for c in rows.column_names if c in have])  # noqa: F841 - read by name below
        # DuckDB finds `new_rows` among this frame's variables (a replacement scan). A table
        # registered on the connection instead stays referenced after unregister() until the
        # connection closes: a corpus written in batches was then all in memory at once.
        self._con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM new_rows")

    def _columns(self, table: str) -> set[str]:
        rows = self._con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = ?",
            [table],
        ).fetchall()
        return {row[0] for row in rows}

    # -- reading -------------------------------------------------------------------------------

    def find_reusable(self, reuse_key: str | None) -> str | None:
        """The newest clean run made from exactly these inputs, if any."""
        if reuse_key is None:
            return None
        row = self._one(
            'SELECT run_id FROM runs WHERE cache_key = ? AND NOT dirty ORDER BY "timestamp" DESC, appended_at DESC LIMIT 1',
            [reuse_key],
        )
        return row[0] if row else None

    def runs(self, strategy: str | None = None, commit: str | None = None) -> list[RunSummary]:
        """Runs, newest first; ``commit`` matches a prefix of the commit hash."""
        where, params = [], []
        if strategy is not None:
            where.append("strategy = ?")
            params.append(strategy)
        if commit is not None:
            where.append('starts_with("commit", ?)')
            params.append(commit)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._con.execute(
            f'SELECT {_SELECT_SUMMARY} FROM runs {clause} ORDER BY "timestamp" DESC, appended_at DESC, run_id DESC',
            params,
        ).fetchall()
        return self._summaries(rows)

    def latest_per_configuration(self) -> list[RunSummary]:
        """The latest run of each (corpus, configuration): best recall first, then fewest tokens."""
        rows = self._con.execute(
            f"SELECT {_SELECT_SUMMARY} FROM latest_runs "
            "ORDER BY corpus_name, corpus_digest, recall DESC NULLS LAST, "
            "context_tokens / nullif(total, 0) ASC NULLS LAST, config_key"
        ).fetchall()
        return self._summaries(rows)

    def _summaries(self, rows: list[tuple]) -> list[RunSummary]:
        """Summaries of ``runs`` rows, each with its metrics from ``run_metrics``."""
        metrics: dict[str, dict[str, MetricValue]] = {}
        if rows and "run_metrics" in self._tables():
            found = self._con.execute(
                "SELECT run_id, metric, value, n, low, high FROM run_metrics WHERE list_contains(?, run_id)",
                [[row[0] for row in rows]],
            ).fetchall()
            for run_id, name, value, n, low, high in found:
                metrics.setdefault(run_id, {})[name] = MetricValue(value, n, low, high)
        return [_summary(row, metrics.get(row[0], {})) for row in rows]

    def _tables(self) -> set[str]:
        return {
            row[0]
            for row in self._con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
            ).fetchall()
        }

    def run_count(self) -> int:
        return self._one("SELECT count(*) FROM runs")[0]

    def get_summary(self, run_id: str) -> RunSummary:
        row = self._one(f"SELECT {_SELECT_SUMMARY} FROM runs WHERE run_id = ?", [run_id])
        if row is None:
            raise StoreError(f"no run {run_id!r} in store {self.path} (list them with: evals runs)")
        return self._summaries([row])[0]

    def references(self, corpus_digest: str) -> list[Reference]:
        """The published figures stored for a corpus (references.json), in the file's order."""
        if "corpus_references" not in self._tables():
            return []
        rows = self._con.execute(
            "SELECT label, citation, metric, level, k, value, note FROM corpus_references WHERE corpus_digest = ? ORDER BY position",
            [corpus_digest],
        ).fetchall()
        names = ("label", "citation", "metric", "level", "k", "value", "note")
        return [Reference.model_validate(dict(zip(names, row, strict=True))) for row in rows]

    def latency_buckets(self, run_id: str) -> list[LatencyBucket]:
        """The run's retrieve latency by records held (none for a run stored before it was recorded)."""
        if "run_latency" not in self._tables():
            return []
        rows = self._con.execute(
            "SELECT held_low, held_high, n, p50_s, p95_s, mean_s FROM run_latency "
            "WHERE run_id = ? AND call = 'retrieve' ORDER BY held_low",
            [run_id],
        ).fetchall()
        return [LatencyBucket(*row) for row in rows]

    def get_run(self, run_id: str) -> StoredRun:
        """A run in full: its play-through with the exact retrieved texts, scores and transcripts."""
        summary = self.get_summary(run_id)
        rows = self._arrow(
            "SELECT conversation_id, description, roles, contents, unrecorded, sessions FROM conversations "
            "WHERE corpus_digest = ? ORDER BY position",
            [summary.corpus_digest],
        ).to_pylist()
        points = self._arrow(f"SELECT {_POINT_COLUMNS} FROM test_points WHERE run_id = ? ORDER BY turn_index", [run_id])
        by_conversation: dict[str, list[dict[str, Any]]] = {}
        for point in points.to_pylist():
            by_conversation.setdefault(point["conversation_id"], []).append(point)
        return self._assemble(summary, rows, by_conversation, self._questions(summary), self._turn_tokens(run_id), self._extras(summary))

    def iter_run(
        self, run_id: str, *, batch_turns: int = 20_000, contents: ContentsSource | None = None
    ) -> Iterator[StoredRun]:
        """The run as :meth:`get_run` gives it, a slice of conversations at a time, in corpus order: each
        slice a :class:`StoredRun` of about ``batch_turns`` turns' worth of conversations (the summary is
        the whole run's), so memory holds one slice, not the whole run.

        The turn texts come from ``contents`` (conversation ids -> each one's turn texts) when given,
        else from the store. Any read of the store's texts decompresses all of a corpus's texts
        (several hundred MB for a LongMemEval-sized corpus), so a caller reading many runs of one
        corpus reads the texts once (:meth:`iter_conversations`) and passes them.
        """
        summary = self.get_summary(run_id)
        digest = summary.corpus_digest
        questions, turn_tokens, extras = self._questions(summary), self._turn_tokens(run_id), self._extras(summary)
        shape = self._conversation_shape(digest)
        rowids: dict[str, list[int]] = {}
        with_texts = False
        for rowid, cid, count in self._con.execute(
            "SELECT rowid, conversation_id, len(text_tokens) FROM test_points WHERE run_id = ?", [run_id]
        ).fetchall():
            rowids.setdefault(cid, []).append(rowid)
            with_texts = with_texts or count > 0
        # Records that are no turn (a summary, say) are texts of their own. Reading that column decompresses
        # all of it in its row group, whatever rows are asked for, so a run's are read in one query and kept
        # as Arrow, each slice taking its rows as Python strings.
        record_texts = (
            self._arrow("SELECT rowid AS row, record_texts FROM test_points WHERE run_id = ? AND len(text_tokens) > 0", [run_id])
            if with_texts
            else None
        )
        text_row = {row: i for i, row in enumerate(record_texts.column("row").to_pylist())} if record_texts is not None else {}
        for group in _slices(shape, batch_turns):
            ids = [row["conversation_id"] for row in group]
            if not group:
                texts: dict[str, list[str]] = {}
            elif contents is not None:
                texts = contents(ids)
            else:
                texts = self._contents(digest, group[0]["position"], group[-1]["position"])
            wanted = [rowid for cid in ids for rowid in rowids.get(cid, [])]
            by_conversation: dict[str, list[dict[str, Any]]] = {}
            if wanted:
                # A run's rows are stored conversation by conversation, so a slice's rows are one range of row ids.
                points = self._arrow(
                    f"SELECT rowid AS row, {_POINT_COLUMNS_NO_TEXTS} "
                    "FROM test_points WHERE rowid BETWEEN ? AND ? AND run_id = ?",
                    [min(wanted), max(wanted), run_id],
                ).to_pylist()
                if record_texts is not None:
                    taken = [point for point in points if point["row"] in text_row]
                    column = record_texts.column("record_texts").take([text_row[point["row"]] for point in taken]).to_pylist()
                    for point, value in zip(taken, column, strict=True):
                        point["record_texts"] = value
                for point in points:
                    if point["conversation_id"] in texts:
                        by_conversation.setdefault(point["conversation_id"], []).append(point)
            for points in by_conversation.values():
                points.sort(key=lambda p: p["turn_index"])
            rows = [{**row, "contents": texts[row["conversation_id"]]} for row in group]
            yield self._assemble(summary, rows, by_conversation, questions, turn_tokens, extras)

    def iter_conversations(
        self, corpus_digest: str, *, batch_turns: int = 20_000
    ) -> Iterator[tuple[str, str, list[str], list[str], list[dict[str, Any]]]]:
        """Every conversation of a corpus, in corpus order, read a slice at a time: ``(conversation_id,
        description, roles, contents, test_points)``, each test point a dict of the corpus's labels
        (``turn_index``, ``question``, ``expected_fact``, ``expected_keywords``, ``evidence_turns``,
        ``category``, ``answerable``), in turn order."""
        points = self.corpus_test_points(corpus_digest)
        texts: dict[str, list[str]] = {}
        for group in _slices(self._conversation_shape(corpus_digest), batch_turns):
            texts = {}  # the last slice's texts go before the next are read
            texts = self._contents(corpus_digest, group[0]["position"], group[-1]["position"]) if group else {}
            for row in group:
                cid = row["conversation_id"]
                yield cid, row["description"], row["roles"], texts[cid], points.get(cid, [])

    def corpus_test_points(self, corpus_digest: str) -> dict[str, list[dict[str, Any]]]:
        """A corpus's test points by conversation id, in turn order, each a dict of its labels (``turn_index``,
        ``question``, ``expected_fact``, ``expected_keywords``, ``evidence_turns``, ``category``, ``answerable``)."""
        names = ("turn_index", "question", "expected_fact", "expected_keywords", "evidence_turns", "category", "answerable")
        points: dict[str, list[dict[str, Any]]] = {}
        for cid, *row in self._con.execute(
            "SELECT conversation_id, turn_index, question, expected_fact, expected_keywords, "
            "coalesce(evidence_turns, []), category, coalesce(answerable, true) "
            "FROM corpus_test_points WHERE corpus_digest = ? ORDER BY conversation_id, turn_index",
            [corpus_digest],
        ).fetchall():
            points.setdefault(cid, []).append(dict(zip(names, row, strict=True)))
        return points

    def conversation_ids(self, corpus_digest: str) -> list[str]:
        """A corpus's conversation ids, in corpus order."""
        return [cid for (cid,) in self._con.execute(
            "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [corpus_digest]
        ).fetchall()]  # fmt: skip

    def _conversation_shape(self, corpus_digest: str) -> list[dict[str, Any]]:
        """Each conversation of a corpus but its texts (cheap to read), in corpus order."""
        return self._arrow(
            "SELECT position, conversation_id, description, roles, unrecorded, sessions FROM conversations "
            "WHERE corpus_digest = ? ORDER BY position",
            [corpus_digest],
        ).to_pylist()

    def _contents(self, corpus_digest: str, first: int, last: int) -> dict[str, list[str]]:
        """The turn texts of the conversations at positions ``first`` to ``last``."""
        return {
            row["conversation_id"]: row["contents"]
            for row in self._arrow(
                "SELECT conversation_id, contents FROM conversations WHERE corpus_digest = ? AND position BETWEEN ? AND ?",
                [corpus_digest, first, last],
            ).to_pylist()
        }

    def _questions(self, summary: RunSummary) -> dict[tuple[str, int], tuple[Any, ...]]:
        return {
            (row[0], row[1]): row[2:]
            for row in self._con.execute(
                "SELECT conversation_id, turn_index, question, expected_fact, expected_keywords, "
                "coalesce(evidence_turns, []), category, coalesce(answerable, true), coalesce(evidence_sessions, []) "
                "FROM corpus_test_points WHERE corpus_digest = ?",
                [summary.corpus_digest],
            ).fetchall()
        }

    def _extras(self, summary: RunSummary) -> tuple[list[Reference], list[LatencyBucket]]:
        """The corpus's published figures and the run's latency, which a StoredRun carries."""
        return self.references(summary.corpus_digest), self.latency_buckets(summary.run_id)

    def _turn_tokens(self, run_id: str) -> dict[str, list[int | None]]:
        return dict(self._con.execute("SELECT conversation_id, turn_tokens FROM run_turn_tokens WHERE run_id = ?", [run_id]).fetchall())

    def _assemble(
        self,
        summary: RunSummary,
        rows: list[dict[str, Any]],
        by_conversation: dict[str, list[dict[str, Any]]],
        questions: dict[tuple[str, int], tuple[Any, ...]],
        turn_tokens: dict[str, list[int | None]],
        extras: tuple[list[Reference], list[LatencyBucket]],
    ) -> StoredRun:
        """A :class:`StoredRun` of the conversations in ``rows`` (corpus rows) with their test point rows."""
        results: list[ConversationResult] = []
        score_lists: list[list[PointScore]] = []
        transcripts: dict[str, list[tuple[str, str]]] = {}
        record_turns: dict[str, list[list[int | None]]] = {}
        unrecorded: dict[str, list[int]] = {}
        for conversation in rows:
            cid, contents = conversation["conversation_id"], conversation["contents"]
            result = ConversationResult(conversation_id=cid, description=conversation["description"], turn_count=len(contents))
            scores: list[PointScore] = []
            refs_of_points: list[list[int | None]] = []
            sessions = conversation["sessions"] or [None] * len(contents)
            for point in by_conversation.get(cid, []):
                question, expected_fact, expected_keywords, evidence, category, answerable, listed = questions[cid, point["turn_index"]]
                ranked = point["ranked_turns"]
                records = decode_records(point["record_turns"], point["record_texts"], contents)
                result_point = TestPointResult(
                    turn_index=point["turn_index"],
                    question=question,
                    expected_fact=expected_fact,
                    expected_keywords=list(expected_keywords),
                    retrieved_records=records,
                    evidence_turns=list(evidence),
                    category=category,
                    answerable=answerable,
                    # The stored refs are the same mapping the run made (evals.turn_refs).
                    retrieved_turns=list(point["source_turns"] or point["record_turns"]) if evidence else None,
                    evidence_sessions=list(listed) or sessions_of(evidence, sessions),
                    ranked_turns=ranked,
                    ranked_sessions=[sessions[t] if t is not None else None for t in ranked] if ranked is not None else None,
                )
                result.test_points.append(result_point)
                tokens = decode_tokens(point["record_turns"], point["text_tokens"], turn_tokens[cid])
                # Scored afresh from the exact records (the stored hit stands, as the run decided it),
                # so a run stored before strict hits and ranks were recorded gets them too.
                scores.append(score_point(result_point, tokens, hit=point["hit"]))
                refs_of_points.append(point["record_turns"])
            results.append(result)
            score_lists.append(scores)
            transcripts[cid] = list(zip(conversation["roles"], contents, strict=True))
            record_turns[cid] = refs_of_points
            if conversation["unrecorded"]:
                unrecorded[cid] = list(conversation["unrecorded"])

        run = RunResult(
            strategy=summary.strategy_config,
            model=summary.model,
            k=summary.k,
            seed=summary.seed,
            corpus_dir=summary.corpus_dir,
            corpus_digest=summary.corpus_digest,
            started_at=summary.timestamp,
            duration_s=summary.duration_s,
            conversations=results,
            strategy_source=summary.strategy_source,
            cutoffs=summary.cutoffs,
            cutoff_rule=summary.cutoff_rule or PREFIX,
        )
        scores = Scores(
            tokenizer=summary.tokenizer,
            conversation_ids=[c.conversation_id for c in results],
            points=score_lists,
        )
        return StoredRun(
            summary=summary,
            run=run,
            scores=scores,
            transcripts=transcripts,
            record_turns=record_turns,
            unrecorded=unrecorded,
            answers=self._answers(summary, run),
            references=extras[0],
            latency=extras[1],
        )

    def get_run_outcomes(self, run_id: str) -> StoredRun:
        """A run without its texts, for comparing runs cheaply (:mod:`evals.compare`): every test point's
        question, expected fact, stored hit, answerability and evidence outcome, and the answers.

        Records, record token counts, strict hits, ranks and transcripts are left
        out (empty lists, ``False``, ``None``, ``{}``): use :meth:`get_run` for those.
        """
        summary = self.get_summary(run_id)
        ids = [row[0] for row in self._con.execute(
            "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [summary.corpus_digest]
        ).fetchall()]  # fmt: skip
        rows = self._con.execute(
            "SELECT tp.conversation_id, tp.turn_index, tp.hit, q.question, q.expected_fact, q.expected_keywords, "
            "coalesce(q.evidence_turns, []) AS evidence, q.category, coalesce(q.answerable, true), "
            "CASE WHEN source_turns IS NULL OR len(source_turns) = 0 THEN record_turns ELSE source_turns END "
            "FROM test_points tp JOIN corpus_test_points q "
            "ON q.corpus_digest = ? AND q.conversation_id = tp.conversation_id AND q.turn_index = tp.turn_index "
            "WHERE tp.run_id = ? ORDER BY tp.conversation_id, tp.turn_index",
            [summary.corpus_digest, run_id],
        ).fetchall()
        by_conversation: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_conversation.setdefault(row[0], []).append(row)
        results: list[ConversationResult] = []
        score_lists: list[list[PointScore]] = []
        for cid in ids:
            result = ConversationResult(conversation_id=cid, description="", turn_count=0)
            scores: list[PointScore] = []
            for _, turn_index, hit, question, fact, keywords, evidence, category, answerable, turns in by_conversation.get(cid, []):
                point = TestPointResult(
                    turn_index=turn_index,
                    question=question,
                    expected_fact=fact,
                    expected_keywords=list(keywords),
                    retrieved_records=[],
                    evidence_turns=list(evidence),
                    category=category,
                    answerable=answerable,
                    retrieved_turns=list(turns) if evidence else None,
                )
                result.test_points.append(point)
                any_, all_ = evidence_hits(point)
                scores.append(PointScore(hit=hit, record_tokens=[], answerable=answerable, evidence_any=any_, evidence_all=all_))
            results.append(result)
            score_lists.append(scores)
        run = RunResult(
            strategy=summary.strategy_config,
            model=summary.model,
            k=summary.k,
            seed=summary.seed,
            corpus_dir=summary.corpus_dir,
            corpus_digest=summary.corpus_digest,
            started_at=summary.timestamp,
            duration_s=summary.duration_s,
            conversations=results,
            strategy_source=summary.strategy_source,
        )
        scores = Scores(tokenizer=summary.tokenizer, conversation_ids=ids, points=score_lists)
        return StoredRun(summary=summary, run=run, scores=scores, transcripts={}, record_turns={}, answers=self._answers(summary, run))

    def _answers(self, summary: RunSummary, run: RunResult) -> AnswerRun | None:
        """The run's answers and verdicts, in the order of its test points (None: a run without answers)."""
        if summary.answer_model is None:
            return None
        rows = self._arrow("SELECT * EXCLUDE (run_id) FROM test_point_answers WHERE run_id = ?", [summary.run_id]).to_pylist()
        by_point = {(row.pop("conversation_id"), row.pop("turn_index")): row for row in rows}
        points = []
        for result in run.conversations:
            answers = []
            for point in result.test_points:
                row = by_point.get((result.conversation_id, point.turn_index))
                if row is None:
                    raise StoreError(
                        f"store {self.path}: run {summary.run_id} has no answer for {result.conversation_id!r} turn {point.turn_index}"
                    )
                answers.append(PointAnswer(**row))
            points.append(answers)
        return AnswerRun(
            answer_model=summary.answer_model,
            judge_model=summary.judge_model,
            base_url=summary.llm_base_url or "",
            points=points,
            settings=summary.llm_settings or {},
            requests_made=summary.llm_requests_made or 0,
            requests_cached=summary.llm_requests_cached or 0,
            prompt_tokens=summary.llm_prompt_tokens or 0,
            completion_tokens=summary.llm_completion_tokens or 0,
        )

    def _one(self, query: str, params: list[Any] | None = None) -> tuple | None:
        # fetchall, not fetchone: DuckDB 2 refuses further queries while a result is unfinished.
        rows = self._con.execute(query, params or []).fetchall()
        return rows[0] if rows else None

    def _arrow(self, query: str, params: list[Any]) -> pa.Table:
        relation = self._con.sql(query, params=params)
        # DuckDB 2 names it to_arrow_table; 1.x called it arrow.
        return relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()


def _slices(shape: list[dict[str, Any]], batch_turns: int) -> Iterator[list[dict[str, Any]]]:
    """Consecutive conversations, about ``batch_turns`` turns at a time; one empty slice for no conversation."""
    group: list[dict[str, Any]] = []
    turns = 0
    for row in shape:
        group.append(row)
        turns += len(row["roles"])
        if turns >= batch_turns:
            yield group
            group, turns = [], 0
    if group or not shape:
        yield group


def _summary(row: tuple, metrics: dict[str, MetricValue]) -> RunSummary:
    values = dict(zip(_SUMMARY_COLUMNS, row, strict=True))
    total = values["total"]
    return RunSummary(
        run_id=values["run_id"],
        commit=values["commit"],
        dirty=values["dirty"],
        model=values["model"],
        date=values["date"].isoformat(),
        timestamp=values["timestamp"].replace(tzinfo=UTC),
        strategy=values["strategy"],
        strategy_config=json.loads(values["strategy_config"]),
        config_key=values["config_key"],
        k=values["k"],
        seed=values["seed"],
        corpus_name=values["corpus_name"],
        corpus_dir=values["corpus_dir"],
        corpus_digest=values["corpus_digest"],
        tokenizer=values["tokenizer"],
        package_version=values["package_version"],
        mneme_version=values["mneme_version"],
        python_version=values["python_version"],
        duration_s=values["duration_s"],
        conversation_count=values["conversation_count"],
        hits=values["hits"],
        total=total,
        recall=values["recall"],
        context_tokens=values["context_tokens"],
        tokens_per_test_point=values["context_tokens"] / total if total else None,
        reuse_key=values["cache_key"],
        # Declared metrics first, in declaration order; any the code no longer declares after them.
        metrics=dict(sorted(metrics.items(), key=lambda item: metric_order(item[0]))),
        cache_hits=values["cache_hits"],
        cache_misses=values["cache_misses"],
        strategy_source=values["strategy_source"],
        cutoffs=list(values["cutoffs"] or []),
        cutoff_rule=values["cutoff_rule"],
        **{name: values[name] for name in _ANSWER_COLUMNS if name != "llm_settings"},
        llm_settings=json.loads(values["llm_settings"]) if values["llm_settings"] else None,
    )


def release_memory() -> None:
    """Hand memory freed by Arrow (its own allocator) and by Python (glibc's) back to the system.

    An append frees large buffers between its steps (the corpus comparison, each batch of
    rows); DuckDB's own allocator cannot reuse what the other two keep, so without this the
    peaks of the steps add up instead of following each other."""
    pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
            pass


def _fingerprint_sql(columns: list[str]) -> str:
    """SQL for a digest of a ``conversations`` row's columns: md5 of each list element, then of their
    concatenation (fixed-length digests, so different lists never concatenate alike)."""
    arrow = tuple(int(part) for part in duckdb.__version__.split(".")[:2]) < (1, 3)
    each = "x -> md5(x)" if arrow else "lambda x: md5(x)"  # DuckDB 1.3 brought `lambda`; 2.0 refuses `->`
    parts = []
    for column in columns:
        if column in ("roles", "contents"):
            parts.append(f"md5(array_to_string(list_transform({column}, {each}), ''))")
        elif column == "unrecorded":
            parts.append("md5(coalesce(unrecorded::VARCHAR, 'null'))")
        else:
            parts.append(f"md5({column})")
    return " || ".join(parts)


def _corpus_difference(
    stored: list[dict[str, Any]], given: list[dict[str, Any]], stored_points: list[dict[str, Any]], given_points: list[dict[str, Any]]
) -> str | None:
    """Where two copies of a corpus first differ, in words; None when they are the same."""
    if [c["conversation_id"] for c in stored] != [c["conversation_id"] for c in given]:
        return "other conversations"
    for old, new in zip(stored, given, strict=True):
        cid = old["conversation_id"]
        if old == new:
            continue
        turns = list(zip(old["roles"], old["contents"], strict=True))
        for index, turn in enumerate(zip(new["roles"], new["contents"], strict=True)):
            if index >= len(turns) or turns[index] != turn:
                return f"conversation {cid!r}, turn {index}"
        if len(turns) != len(new["contents"]):
            return f"conversation {cid!r}, turn {min(len(turns), len(new['contents']))}"
        return f"conversation {cid!r}, its description or unrecorded turns"
    for old, new in zip(stored_points, given_points, strict=False):
        if old != new:
            return f"conversation {new['conversation_id']!r}, test point at turn {new['turn_index']}"
    if len(stored_points) != len(given_points):
        return "its test points"
    return None


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # nothing to roll back: the failed statement already ended the transaction


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
