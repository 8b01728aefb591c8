"""Writing to the store: one run (or an import's runs) in one transaction, all of it or none of it.

Writes skip DuckDB's write-ahead log and are checkpointed as they commit
(:func:`evals.store._connect.connect`), so a killed process leaves the file as
it was before the transaction or as it is after it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from evals.store._connect import MEMORY_LIMIT, Connected, rollback, utc_now, write_error
from evals.store._errors import CorpusConflict, StoreError
from evals.store._models import FailedRun
from evals.store._read import ANSWER_COLUMNS, FAILED_COLUMNS, SUMMARY_COLUMNS
from evals.store._records import (
    RunRecord,
    answers_table,
    content_digest,
    corpus_batches,
    corpus_points,
    corpus_rows,
    gc_paused,
    latency_table,
    metrics_table,
    record_from_evaluation,
    references_table,
    run_batches,
    run_tables,
)
from evals.store._undo import kept_on_failure

if TYPE_CHECKING:
    from evals.judge.scoring import Evaluation
    from evals.model.corpus import Conversation
    from evals.model.provenance import Provenance

__all__ = ["TEXTS_UNDER_LIMIT", "StoreWriter", "release_memory"]

# Bytes of record texts (records that are no turn: summaries) a write keeps under the buffer pool's limit
# (_connect.MEMORY_LIMIT); past this the limit is lifted for the rest of the write.
TEXTS_UNDER_LIMIT = 16 * 1024**2


class StoreWriter(Connected):
    """The store's writing half: :meth:`append` and :meth:`write_records`."""

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction, committed and checkpointed; if anything fails, the file is put back byte
        for byte as it was (:mod:`evals.store._undo`) and this store takes no further writes."""
        if self.read_only:
            raise StoreError(f"store {self.path} was opened read-only")
        if self._failed:
            raise StoreError(f"store {self.path}: a write already failed on this connection; open the store again")
        try:
            with kept_on_failure(self.path, self._held.opened()):
                self._con.execute("BEGIN TRANSACTION")
                try:
                    yield
                except BaseException:
                    rollback(self._con)
                    raise
                release_memory()
                try:
                    # The checkpoint reads back blocks of every table it rewrites: past a few hundred runs with
                    # rankings deep enough for the budgets, 128 MB failed it ("failed to pin block", a 36 MB BEAM
                    # store) and invalidated the database. The limit holds the rows' writing above; the finally
                    # sets it again.
                    self._con.execute("RESET memory_limit")
                    self._con.execute("COMMIT")
                    # Without a write-ahead log (_connect) the commit is in memory only; the checkpoint
                    # writes it to the file, all of it or (killed part-way) none of it.
                    self._con.execute("CHECKPOINT")
                except duckdb.Error as exc:
                    rollback(self._con)
                    raise write_error(self.path, exc) from None
        except BaseException:
            # DuckDB's view of the file is no longer the file's (it was put back); nothing more is written
            # through this connection, not even the checkpoint on close.
            self._failed = True
            raise
        finally:
            try:
                self._con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")  # if a write of big texts lifted it
            except duckdb.Error:
                pass

    def append(
        self,
        evaluation: Evaluation,
        provenance: Provenance,
        *,
        cache_hits: int | None = None,
        cache_misses: int | None = None,
        tuned_on: list[str] | None = None,
        writes_with_llm: bool | None = None,
    ) -> str:
        """Add one run, in one transaction; return its new run id. ``cache_hits``/``cache_misses``:
        what the run found in the embedding cache and computed (None: it used none); ``tuned_on`` and
        ``writes_with_llm``: what the run declares about its system (its strategy's spec; None: nothing)."""
        record = record_from_evaluation(
            evaluation,
            provenance,
            cache_hits=cache_hits,
            cache_misses=cache_misses,
            tuned_on=tuned_on,
            writes_with_llm=writes_with_llm,
        )
        self.write_records([record])
        return record.summary.run_id

    def write_records(self, records: Sequence[RunRecord | FailedRun]) -> list[bool]:
        """Add runs (and failed runs) in one transaction, skipping run ids already present; return which were added."""
        added: list[bool] = []
        ids = [r.run_id if isinstance(r, FailedRun) else r.summary.run_id for r in records]
        try:
            with gc_paused(), self._transaction():
                known = set(self._existing_run_ids(ids))
                for run_id, record in zip(ids, records, strict=True):
                    if run_id in known:
                        added.append(False)
                        continue
                    if isinstance(record, FailedRun):
                        self._insert_failed(record)
                    else:
                        self._insert_run(record)
                    known.add(run_id)
                    added.append(True)
        except duckdb.Error as exc:
            raise write_error(self.path, exc) from None
        return added

    def write_failed(self, failures: Sequence[FailedRun]) -> list[bool]:
        """Add failed runs in one transaction, skipping run ids already present; return which were added."""
        return self.write_records(failures)

    def _insert_failed(self, failed: FailedRun) -> None:
        values: dict[str, Any] = {name: getattr(failed, name) for name in FAILED_COLUMNS}
        values["strategy_config"] = json.dumps(failed.strategy_config, ensure_ascii=False)
        values["timestamp"] = failed.timestamp.astimezone(UTC).replace(tzinfo=None)
        values["appended_at"] = utc_now()
        columns = ", ".join(f'"{name}"' for name in values)
        marks = ", ".join("?" for _ in values)
        self._con.execute(f"INSERT INTO failed_runs ({columns}) VALUES ({marks})", list(values.values()))

    def _existing_run_ids(self, run_ids: list[str]) -> list[str]:
        """The ids among ``run_ids`` the store holds, as a run or as a failed run."""
        rows = self._con.execute("SELECT run_id FROM runs WHERE list_contains(?, run_id)", [run_ids]).fetchall()
        if "failed_runs" in self._tables():
            failed = "SELECT run_id FROM failed_runs WHERE list_contains(?, run_id)"
            rows += self._con.execute(failed, [run_ids]).fetchall()
        return [row[0] for row in rows]

    def _insert_run(self, record: RunRecord) -> None:
        self._insert_corpus(record)
        self._drop_cached_blocks()
        release_memory()
        summary = record.summary
        values = {name: getattr(summary, name) for name in SUMMARY_COLUMNS if name != "cache_key"}
        values["cache_key"] = summary.reuse_key
        if summary.answer_model is None:
            # A run without answers writes none of their columns (so older schemas take it too).
            values = {name: value for name, value in values.items() if name not in ANSWER_COLUMNS}
        values["strategy_config"] = json.dumps(summary.strategy_config, ensure_ascii=False)
        if summary.llm_settings is not None:
            values["llm_settings"] = json.dumps(summary.llm_settings, ensure_ascii=False, sort_keys=True)
        if summary.llm_usage is not None:
            values["llm_usage"] = json.dumps(summary.llm_usage, ensure_ascii=False)
        values["rule"] = None if summary.rule is None else json.dumps(dataclasses.asdict(summary.rule), ensure_ascii=False)
        if summary.origin is not None:
            values["origin"] = json.dumps(summary.origin, ensure_ascii=False, sort_keys=True)
        if summary.protocol_source is not None:
            values["protocol_source"] = json.dumps(summary.protocol_source, ensure_ascii=False, sort_keys=True)
        values["timestamp"] = summary.timestamp.astimezone(UTC).replace(tzinfo=None)
        values["appended_at"] = utc_now()
        # A store opened with fewer migrations (tests build old stores so) has fewer columns.
        have = self._columns("runs")
        values = {name: value for name, value in values.items() if name in have}
        columns = ", ".join(f'"{name}"' for name in values)
        marks = ", ".join("?" for _ in values)
        self._con.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(values.values()))
        # Encoded and inserted a batch of conversations at a time, after the corpus: records that
        # are not turns (summary_buffer's summaries of long conversations) run to hundreds of megabytes.
        # A store opened with fewer migrations (tests build old stores so) keeps summaries as texts.
        compact = "content_digest" in self._columns("conversations")
        texts = 0
        for begin, end in run_batches(record.run):
            points, turn_tokens = run_tables(record, begin, end, compact=compact)
            texts += sum(chunk.values.nbytes for chunk in points.column("record_texts").chunks)
            if texts > TEXTS_UNDER_LIMIT:
                # DuckDB writes a vector of test points' record texts at once: records stored as text
                # (summaries by another summariser, megabytes a test point) take what they take.
                self._con.execute("RESET memory_limit")
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

        Conversations go in a batch at a time (:func:`corpus_batches`: a few tens of megabytes of
        text), walked once: a corpus of long conversations is hundreds of megabytes of text, read
        from its files as it is walked. They are compared by digest: each stored row keeps its
        conversation's (``content_digest``), so the stored texts are never read back, which DuckDB
        would do for every conversation at once."""
        digest = record.summary.corpus_digest
        conversations = record.conversations
        stored_count = self._one("SELECT count(*) FROM conversations WHERE corpus_digest = ?", [digest])[0]
        # A stored corpus is compared by content digest: worked out in the walk that gathers the test points.
        digests: list[str] | None = [] if stored_count else None
        test_points = corpus_points(digest, conversations, digests)
        turn_rows = self._turn_rows()
        if stored_count == 0:
            for begin, batch in corpus_batches(conversations):
                rows, turns = corpus_rows(digest, batch, offset=begin, turn_rows=turn_rows)
                del batch
                self._insert_arrow("conversations", rows)
                if turns is not None:
                    self._insert_arrow("conversation_turns", turns)
                del rows, turns
                release_memory()
            self._insert_arrow("corpus_test_points", test_points)
            return
        difference = self._stored_corpus_difference(digest, conversations, test_points, stored_count, digests)
        if difference is not None:
            raise CorpusConflict(
                record.summary.run_id,
                f"run {record.summary.run_id} is on corpus {digest[:12]}, but the store holds different text under "
                f"that digest ({difference}); refusing to mix them",
            )

    def _turn_rows(self) -> bool:
        """Whether the store keeps a row per turn (schema 12); before, a conversation's turns were lists."""
        return "conversation_turns" in self._tables()

    def _stored_corpus_difference(
        self,
        digest: str,
        conversations: Sequence[Conversation],
        test_points: pa.Table,
        stored_count: int,
        digests: list[str] | None = None,
    ) -> str | None:
        """Where the corpus stored under ``digest`` first differs from ``conversations`` (whose content
        digests are ``digests``, when worked out already); None when the same."""
        # A store opened with fewer migrations (tests build old stores so) compares the columns it has.
        have = self._columns("conversations")
        turn_rows = self._turn_rows()
        columns = [c for c in ("conversation_id", "description", "roles", "contents", "unrecorded") if c in have or turn_rows]
        ids = [
            row[0]
            for row in self._con.execute(
                "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [digest]
            ).fetchall()
        ]
        if len(ids) != len(conversations):
            return "other conversations"
        stored_digests = (
            dict(self._con.execute(
                "SELECT position, content_digest FROM conversations WHERE corpus_digest = ?", [digest]
            ).fetchall())
            if "content_digest" in have
            else {}
        )  # fmt: skip
        if stored_digests and None not in stored_digests.values():
            if digests is not None:  # no walk of the conversations unless one differs (a digest covers the id)
                for position, given in enumerate(digests):
                    if stored_digests.get(position) != given:
                        conversation = conversations[position]
                        if conversation.id != ids[position]:
                            return "other conversations"
                        # Only a conversation that differs is read back whole, to say where.
                        difference = self._difference_at(digest, columns, conversation, position)
                        if difference is not None:
                            return difference
                return self._points_difference(digest, test_points)
            for position, conversation in enumerate(conversations):
                if conversation.id != ids[position]:
                    return "other conversations"
                if stored_digests.get(position) != content_digest(conversation):
                    # Only a conversation that differs is read back whole, to say where.
                    difference = self._difference_at(digest, columns, conversation, position)
                    if difference is not None:
                        return difference
            return self._points_difference(digest, test_points)
        # Stored before rows kept their digest: fingerprints, not texts, computed inside DuckDB (a
        # conversation's turns digested there instead of copied into Python as well).
        if ids != [c.id for c in conversations]:
            return "other conversations"
        stored_sql = _fingerprint_sql(columns, "conversations", "conversation_turns" if turn_rows else None)
        stored = dict(self._con.execute(stored_sql, [digest]).fetchall())
        given_sql = _fingerprint_sql(columns, "new_rows", "new_turns" if turn_rows else None)
        for begin, batch in corpus_batches(conversations):
            new_rows, new_turns = corpus_rows(digest, batch, offset=begin, turn_rows=turn_rows)  # noqa: F841 - read by name below
            given = self._con.execute(given_sql, [digest]).fetchall()
            for position, value in given:
                if stored.get(position) == value:
                    continue
                difference = self._difference_at(digest, columns, batch[position - begin], position)
                if difference is not None:
                    return difference
        return self._points_difference(digest, test_points)

    def _difference_at(self, digest: str, columns: list[str], conversation: Conversation, position: int) -> str | None:
        """Where the stored conversation at ``position`` differs from ``conversation``, in words; None when the same."""
        new = corpus_rows(digest, [conversation], offset=position, turn_rows=False)[0].select(columns)
        if not self._turn_rows():
            old = self._arrow(
                f"SELECT {', '.join(columns)} FROM conversations WHERE corpus_digest = ? AND position = ?",
                [digest, position],
            )
            return _corpus_difference(old.to_pylist(), new.to_pylist(), [], [])
        meta = [c for c in columns if c not in ("roles", "contents")]
        old_rows = self._arrow(
            f"SELECT {', '.join(meta)} FROM conversations WHERE corpus_digest = ? AND position = ?", [digest, position]
        ).to_pylist()
        turns = self._arrow(
            "SELECT role, content FROM conversation_turns WHERE corpus_digest = ? AND position = ? ORDER BY turn_index",
            [digest, position],
        )
        for row in old_rows:
            row["roles"], row["contents"] = turns.column("role").to_pylist(), turns.column("content").to_pylist()
        return _corpus_difference([{c: row[c] for c in columns} for row in old_rows], new.to_pylist(), [], [])

    def _points_difference(self, digest: str, test_points: pa.Table) -> str | None:
        """Where the stored test points of the corpus differ from ``test_points``; None when the same."""
        have = self._columns("corpus_test_points")
        point_columns = [
            "coalesce(answerable, true) AS answerable" if c == "answerable" else c
            for c in (
                "conversation_id",
                "turn_index",
                "question",
                "expected_fact",
                "expected_keywords",
                "evidence_turns",
                "category",
                "answerable",
            )
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
            sorted(
                test_points.select(stored_points.column_names).to_pylist(), key=lambda r: (r["conversation_id"], r["turn_index"])
            ),
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


def _fingerprint_sql(columns: list[str], conversations: str, turns: str | None) -> str:
    """A query of ``(position, fingerprint)`` for each conversation of the corpus digest given as its one
    parameter: md5 of each column's value, of a list's each element (then of their concatenation:
    fixed-length digests, so different lists never concatenate alike). ``conversations`` names the rows
    of the conversations, ``turns`` the rows of their turns (None: the turns are lists in ``conversations``)."""
    arrow = tuple(int(part) for part in duckdb.__version__.split(".")[:2]) < (1, 3)
    each = "x -> md5(x)" if arrow else "lambda x: md5(x)"  # DuckDB 1.3 brought `lambda`; 2.0 refuses `->`
    parts = []
    for column in columns:
        if column in ("roles", "contents") and turns is not None:
            parts.append(f"coalesce(t.{column}, md5(''))")
        elif column in ("roles", "contents"):
            parts.append(f"md5(array_to_string(list_transform(c.{column}, {each}), ''))")
        elif column == "unrecorded":
            parts.append("md5(coalesce(c.unrecorded::VARCHAR, 'null'))")
        else:
            parts.append(f"md5(c.{column})")
    query = f"SELECT c.position, {' || '.join(parts)} FROM {conversations} c"
    if turns is not None:
        # The turns digested in order, per conversation: the same digests as the lists' above.
        query += (
            " LEFT JOIN (SELECT position, md5(string_agg(md5(role), '' ORDER BY turn_index)) AS roles,"
            " md5(string_agg(md5(content), '' ORDER BY turn_index)) AS contents"
            f" FROM {turns} WHERE corpus_digest = $1 GROUP BY position) t ON t.position = c.position"
        )
    return query + " WHERE c.corpus_digest = $1"


def _corpus_difference(
    stored: list[dict[str, Any]],
    given: list[dict[str, Any]],
    stored_points: list[dict[str, Any]],
    given_points: list[dict[str, Any]],
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
