"""Reading the store: run summaries, whole runs (at once or a slice at a time), a corpus's conversations.

Every read path that gives a run back builds its :class:`RunResult` with
:func:`run_result`, so what a summary row carries (the cutoffs and their rule
among it) reaches every reader alike.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC
from typing import Any

import numpy as np

from evals.benchmarks import rule_of
from evals.judge.headline import Rule, headline_of
from evals.judge.metrics import LatencyBucket, MetricValue, metric_order
from evals.judge.retrieval import held_sessions, sessions_of
from evals.judge.scoring import Match, PointScore, Scores, evidence_hits, score_point
from evals.model.corpus import Reference
from evals.model.results import (
    PREFIX,
    AnswerRun,
    ConversationResult,
    PointAnswer,
    RunResult,
    TestPointResult,
    usage_from_json,
)
from evals.store._connect import Connected, reads
from evals.store._errors import StoreError
from evals.store._models import FailedRun, RunSummary, StoredRun
from evals.store._records import decode_records, decode_tokens

__all__ = ["ANSWER_COLUMNS", "FAILED_COLUMNS", "SUMMARY_COLUMNS", "ContentsSource", "StoreReader", "outcomes_of", "run_result"]

ANSWER_COLUMNS = (
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
    "llm_usage",
    "answer_protocol",
    "protocol_source",
)
# The answer columns stored as JSON text.
_JSON_COLUMNS = ("llm_settings", "llm_usage", "protocol_source", "origin")
SUMMARY_COLUMNS = (
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
    "benchmark",
    "rule",
    "corpus_release",
    "corpus_file",
    "tuned_on",
    "writes_with_llm",
    "origin",
    *ANSWER_COLUMNS,
)
_SELECT_SUMMARY = ", ".join(f'"{c}"' for c in SUMMARY_COLUMNS)
# The failed_runs table's columns, as FailedRun names them.
FAILED_COLUMNS = tuple(f.name for f in dataclasses.fields(FailedRun))
_SELECT_FAILED = ", ".join(f'"{c}"' for c in FAILED_COLUMNS)
_POINT_COLUMNS = (
    'conversation_id, turn_index, hit, strict_hit, "rank", record_turns, record_texts, text_tokens, source_turns, '
    "ranked_turns, ranked_held, ranked_tokens"
)
# The same, with the record texts left out (empty): Store.iter_run reads them apart.
_POINT_COLUMNS_NO_TEXTS = _POINT_COLUMNS.replace("record_texts", "[]::VARCHAR[] AS record_texts")
# Conversation ids -> each one's turn texts, for Store.iter_run.
ContentsSource = Callable[[Sequence[str]], dict[str, list[str]]]


class StoreReader(Connected):
    """The store's reading half: summaries, runs, a corpus's conversations and test points."""

    @reads
    def find_reusable(self, reuse_key: str | None) -> str | None:
        """The newest clean run made from exactly these inputs, if any."""
        if reuse_key is None:
            return None
        row = self._one(
            'SELECT run_id FROM runs WHERE cache_key = ? AND NOT dirty ORDER BY "timestamp" DESC, appended_at DESC LIMIT 1',
            [reuse_key],
        )
        return row[0] if row else None

    @reads
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

    @reads
    def latest_per_configuration(self) -> list[RunSummary]:
        """The latest run of each (corpus, configuration): best recall first, then fewest tokens."""
        rows = self._con.execute(
            f"SELECT {_SELECT_SUMMARY} FROM latest_runs "
            "ORDER BY corpus_name, corpus_digest, recall DESC NULLS LAST, "
            "context_tokens / nullif(total, 0) ASC NULLS LAST, config_key"
        ).fetchall()
        return self._summaries(rows)

    @reads
    def failed_runs(self, strategy: str | None = None, commit: str | None = None) -> list[FailedRun]:
        """Failed runs, newest first (filtered as :meth:`runs`)."""
        where, params = [], []
        if strategy is not None:
            where.append("strategy = ?")
            params.append(strategy)
        if commit is not None:
            where.append('starts_with("commit", ?)')
            params.append(commit)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._con.execute(
            f'SELECT {_SELECT_FAILED} FROM failed_runs {clause} ORDER BY "timestamp" DESC, appended_at DESC, run_id DESC',
            params,
        ).fetchall()
        return [_failed(row) for row in rows]

    @reads
    def latest_failures(self) -> list[FailedRun]:
        """Each (corpus, configuration) whose latest attempt failed: its latest failure, when no run of the
        configuration on that corpus started after it (what the boards show as "failed: <reason>")."""
        rows = self._con.execute(
            f"SELECT {_SELECT_FAILED} FROM ("
            "  SELECT * FROM failed_runs QUALIFY row_number() OVER ("
            '    PARTITION BY corpus_digest, config_key ORDER BY "timestamp" DESC, appended_at DESC, run_id DESC) = 1'
            ") f WHERE NOT EXISTS ("
            "  SELECT 1 FROM runs r"
            '  WHERE r.corpus_digest = f.corpus_digest AND r.config_key = f.config_key AND r."timestamp" > f."timestamp"'
            ") ORDER BY corpus_name, corpus_digest, k, config_key"
        ).fetchall()
        return [_failed(row) for row in rows]

    @reads
    def get_failed(self, run_id: str) -> FailedRun | None:
        """The failed run ``run_id``; None when no run of that id failed."""
        row = self._one(f"SELECT {_SELECT_FAILED} FROM failed_runs WHERE run_id = ?", [run_id])
        return _failed(row) if row is not None else None

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

    @reads
    def run_count(self) -> int:
        return self._one("SELECT count(*) FROM runs")[0]

    @reads
    def get_summary(self, run_id: str) -> RunSummary:
        row = self._one(f"SELECT {_SELECT_SUMMARY} FROM runs WHERE run_id = ?", [run_id])
        if row is None:
            raise StoreError(f"no run {run_id!r} in store {self.path} (list them with: evals runs)")
        return self._summaries([row])[0]

    @reads
    def references(self, corpus_digest: str) -> list[Reference]:
        """The published figures stored for a corpus (references.json), in the file's order."""
        if "corpus_references" not in self._tables():
            return []
        rows = self._con.execute(
            "SELECT label, citation, metric, level, k, value, note FROM corpus_references "
            "WHERE corpus_digest = ? ORDER BY position",
            [corpus_digest],
        ).fetchall()
        names = ("label", "citation", "metric", "level", "k", "value", "note")
        return [Reference.model_validate(dict(zip(names, row, strict=True))) for row in rows]

    @reads
    def topk_agreement(self, run_ids: list[str], k: int) -> dict[tuple[str, str], tuple[int, int]]:
        """For each two of ``run_ids`` (a < b), the test points both hold, and of those, how many had the same
        first ``k`` records, compared as stored: turn references, and the texts of records that are no turn."""
        if len(run_ids) < 2:
            return {}
        # Through _rows: records that are whole sessions (MemPalace's) are megabytes a vector, over the read limit.
        rows = self._rows(
            "SELECT a.run_id, b.run_id, count(*), count(*) FILTER (WHERE "
            "list_slice(a.record_turns, 1, $k) IS NOT DISTINCT FROM list_slice(b.record_turns, 1, $k) AND "
            "list_slice(a.record_texts, 1, $k) IS NOT DISTINCT FROM list_slice(b.record_texts, 1, $k)) "
            "FROM test_points a JOIN test_points b ON a.conversation_id = b.conversation_id "
            "AND a.turn_index = b.turn_index AND a.run_id < b.run_id "
            "WHERE a.run_id IN (SELECT unnest($ids)) AND b.run_id IN (SELECT unnest($ids)) "
            "GROUP BY a.run_id, b.run_id",
            {"k": k, "ids": list(run_ids)},  # type: ignore[arg-type]
        )
        return {(a, b): (same, total) for a, b, total, same in rows}

    @reads
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

    @reads
    def get_run(self, run_id: str) -> StoredRun:
        """A run in full: its play-through with the exact retrieved texts, scores and transcripts."""
        summary = self.get_summary(run_id)
        shape = self._conversation_shape(summary.corpus_digest)
        # A slice of conversations' turns at a time, as iter_run reads them: in one query, the whole corpus's
        # texts were in Arrow and in Python at once (a reused full_history run on BEAM-10M, 611 MB of
        # files: 1,521 MiB before the run was assembled, 1,139 of it held after).
        rows = [row for group in _slices(shape, 20_000) if group for row in self._with_turns(summary.corpus_digest, group)]
        points = self._arrow(f"SELECT {_POINT_COLUMNS} FROM test_points WHERE run_id = ? ORDER BY turn_index", [run_id])
        by_conversation: dict[str, list[dict[str, Any]]] = {}
        for point in points.to_pylist():
            by_conversation.setdefault(point["conversation_id"], []).append(point)
        return self._assemble(
            summary, rows, by_conversation, self._questions(summary), self._turn_tokens(run_id), self._extras(summary)
        )

    @reads
    def iter_run(self, run_id: str, *, batch_turns: int = 20_000, contents: ContentsSource | None = None) -> Iterator[StoredRun]:
        """The run as :meth:`get_run` gives it, a slice of conversations at a time, in corpus order: each
        slice a :class:`StoredRun` of about ``batch_turns`` turns' worth of conversations (the summary is
        the whole run's), so memory holds one slice, not the whole run.

        The turn texts come from ``contents`` (conversation ids -> each one's turn texts) when given,
        else from the store, a slice's turns at a time (one row per turn: a read touches the row
        groups of those turns only).
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
            rows = self._with_turns(digest, group, contents(ids) if contents is not None else None) if group else []
            texts = {row["conversation_id"]: row["contents"] for row in rows}
            wanted = [rowid for cid in ids for rowid in rowids.get(cid, [])]
            by_conversation: dict[str, list[dict[str, Any]]] = {}
            if wanted:
                # A run's rows are stored conversation by conversation, so a slice's rows are one range of row ids.
                points = self._arrow(
                    f"SELECT rowid AS row, {_POINT_COLUMNS_NO_TEXTS} FROM test_points WHERE rowid BETWEEN ? AND ? AND run_id = ?",
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
            yield self._assemble(summary, rows, by_conversation, questions, turn_tokens, extras)

    @reads
    def iter_conversations(
        self, corpus_digest: str, *, batch_turns: int = 20_000
    ) -> Iterator[tuple[str, str, list[str], list[str], list[dict[str, Any]]]]:
        """Every conversation of a corpus, in corpus order, read a slice at a time: ``(conversation_id,
        description, roles, contents, test_points)``, each test point a dict of the corpus's labels
        (``turn_index``, ``question``, ``expected_fact``, ``expected_keywords``, ``evidence_turns``,
        ``category``, ``answerable``), in turn order."""
        points = self.corpus_test_points(corpus_digest)
        rows: list[dict[str, Any]] = []
        for group in _slices(self._conversation_shape(corpus_digest), batch_turns):
            rows = []  # the last slice's texts go before the next are read
            rows = self._with_turns(corpus_digest, group) if group else []
            for row in rows:
                cid = row["conversation_id"]
                yield cid, row["description"], row["roles"], row["contents"], points.get(cid, [])

    @reads
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

    @reads
    def conversation_ids(self, corpus_digest: str) -> list[str]:
        """A corpus's conversation ids, in corpus order."""
        return [cid for (cid,) in self._con.execute(
            "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [corpus_digest]
        ).fetchall()]  # fmt: skip

    @reads
    def conversation_shapes(self, corpus_digest: str) -> list[dict[str, Any]]:
        """Each conversation of a corpus without its texts, in corpus order: ``position``, ``conversation_id``,
        ``description``, ``roles``, ``unrecorded`` (the turns played but never added to memory), and each
        turn's ``sessions`` and ``dates`` (empty or None where the corpus has none). Read a slice of
        conversations at a time, without the turns' texts."""
        shapes: list[dict[str, Any]] = []
        for group in _slices(self._conversation_shape(corpus_digest), 20_000):
            no_texts = {row["conversation_id"]: None for row in group}  # the content column is not read
            for row in self._with_turns(corpus_digest, group, no_texts) if group else []:
                del row["contents"]
                shapes.append(row)
        return shapes

    def _conversation_shape(self, corpus_digest: str) -> list[dict[str, Any]]:
        """Each conversation of a corpus but its turns (``position``, ``conversation_id``, ``description``,
        ``unrecorded``, ``turn_count``), in corpus order: one small row each."""
        return self._arrow(
            "SELECT position, conversation_id, description, unrecorded, turn_count FROM conversations "
            "WHERE corpus_digest = ? ORDER BY position",
            [corpus_digest],
        ).to_pylist()

    def _with_turns(
        self, corpus_digest: str, group: list[dict[str, Any]], contents: dict[str, list[str] | None] | None = None
    ) -> list[dict[str, Any]]:
        """The consecutive conversations ``group`` (rows of :meth:`_conversation_shape`), each with its
        ``roles``, ``contents``, ``sessions`` and ``dates`` (the last two None when no turn has one): one
        query for the rows of their turns, which touches only the row groups that hold them. ``contents``
        (conversation id -> turn texts) given: the texts come from there, and their column is not read."""
        first, last = group[0]["position"], group[-1]["position"]
        columns = "position, turn_index, role, session, date" + ("" if contents is not None else ", content")
        turns = self._arrow(
            f"SELECT {columns} FROM conversation_turns WHERE corpus_digest = ? AND position BETWEEN ? AND ? "
            "ORDER BY position, turn_index",
            [corpus_digest, first, last],
        )
        positions = turns.column("position").to_numpy()
        indices = turns.column("turn_index").to_numpy()
        rows: list[dict[str, Any]] = []
        for row in group:
            count = row["turn_count"]
            start, stop = (int(np.searchsorted(positions, row["position"], side)) for side in ("left", "right"))
            if stop - start != count or (count and (indices[start], indices[stop - 1]) != (0, count - 1)):
                raise StoreError(
                    f"store {self.path}: conversation {row['conversation_id']!r} of corpus {corpus_digest[:12]} "
                    f"does not have its {count} turns stored; restore the store from a copy"
                )
            part = turns.slice(start, count)
            sessions, dates = part.column("session").to_pylist(), part.column("date").to_pylist()
            texts = contents[row["conversation_id"]] if contents is not None else part.column("content").to_pylist()
            rows.append(
                {
                    **row,
                    "roles": part.column("role").to_pylist(),
                    "contents": texts,
                    # Written NULL when no turn had one (evals.store._records.corpus_rows), and read so.
                    "sessions": sessions if any(v is not None for v in sessions) else None,
                    "dates": dates if any(v is not None for v in dates) else None,
                }
            )
        return rows

    def _questions(self, summary: RunSummary) -> dict[tuple[str, int], tuple[Any, ...]]:
        return {
            (row[0], row[1]): row[2:]
            for row in self._con.execute(
                "SELECT conversation_id, turn_index, question, expected_fact, expected_keywords, "
                "coalesce(evidence_turns, []), category, coalesce(answerable, true), coalesce(evidence_sessions, []), "
                "coalesce(rubric, []) FROM corpus_test_points WHERE corpus_digest = ?",
                [summary.corpus_digest],
            ).fetchall()
        }

    def _extras(self, summary: RunSummary) -> tuple[list[Reference], list[LatencyBucket]]:
        """The corpus's published figures and the run's latency, which a StoredRun carries."""
        return self.references(summary.corpus_digest), self.latency_buckets(summary.run_id)

    def _turn_tokens(self, run_id: str) -> dict[str, list[int | None]]:
        return dict(
            self._con.execute("SELECT conversation_id, turn_tokens FROM run_turn_tokens WHERE run_id = ?", [run_id]).fetchall()
        )

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
        sessions_by: dict[str, list[str | None]] = {}
        dates: dict[str, list[str | None]] = {}
        listed_sessions: dict[str, list[list[str]]] = {}
        rubrics: dict[str, list[list[str]]] = {}
        for conversation in rows:
            cid, contents = conversation["conversation_id"], conversation["contents"]
            result = ConversationResult(conversation_id=cid, description=conversation["description"], turn_count=len(contents))
            scores: list[PointScore] = []
            refs_of_points: list[list[int | None]] = []
            listed_of_points: list[list[str]] = []
            rubric_of_points: list[list[str]] = []
            sessions = conversation["sessions"] or [None] * len(contents)
            for point in by_conversation.get(cid, []):
                question, expected_fact, expected_keywords, evidence, category, answerable, listed, rubric = questions[
                    cid, point["turn_index"]
                ]
                rubric_of_points.append(list(rubric))
                ranked, refs = point["ranked_turns"], point["record_turns"]
                if ranked is not None and ranked == refs:
                    # One list where the ranking is the records' turns, as the play-through keeps it: full_history's
                    # 21,000 turns a test point at BEAM-10M were two lists of int objects a point (1,384 MiB read).
                    ranked = refs
                records = decode_records(
                    point["record_turns"], point["record_texts"], contents,
                    before=point["turn_index"], roles=conversation["roles"], unrecorded=conversation["unrecorded"],
                )  # fmt: skip
                result_point = TestPointResult(
                    turn_index=point["turn_index"],
                    question=question,
                    expected_fact=expected_fact,
                    expected_keywords=list(expected_keywords),
                    retrieved_records=records,
                    evidence_turns=list(evidence),
                    category=category,
                    answerable=answerable,
                    rubric=list(rubric),
                    # The stored refs are the same mapping the run made (evals.model.turn_refs).
                    retrieved_turns=(point["source_turns"] or refs) if evidence else None,
                    evidence_sessions=list(listed) or sessions_of(evidence, sessions),
                    ranked_turns=ranked,
                    ranked_sessions=[sessions[t] if t is not None else None for t in ranked] if ranked is not None else None,
                    ranked_held=point["ranked_held"],
                    ranked_held_sessions=held_sessions(point["ranked_held"], sessions),
                    ranked_tokens=point["ranked_tokens"],
                )
                result.test_points.append(result_point)
                tokens = decode_tokens(point["record_turns"], point["text_tokens"], turn_tokens[cid])
                # Scored afresh from the exact records (the stored hit stands, as the run decided it),
                # so a run stored before strict hits and ranks were recorded gets them too.
                # The run's own hit, strict hit and rank where it stored them (runs stored before strict hits and
                # ranks were: matched again here, from the exact records).
                known = point["strict_hit"] is not None and point["hit"] is not None
                stored = Match(point["hit"], point["strict_hit"], point["rank"]) if known else None
                scores.append(score_point(result_point, tokens, hit=point["hit"], stored=stored))
                refs_of_points.append(point["record_turns"])
                listed_of_points.append(list(listed))
            results.append(result)
            score_lists.append(scores)
            transcripts[cid] = list(zip(conversation["roles"], contents, strict=True))
            record_turns[cid] = refs_of_points
            if conversation["unrecorded"]:
                unrecorded[cid] = list(conversation["unrecorded"])
            if conversation["sessions"]:
                sessions_by[cid] = conversation["sessions"]
            if conversation["dates"]:
                dates[cid] = conversation["dates"]
            if any(listed_of_points):
                listed_sessions[cid] = listed_of_points
            if any(rubric_of_points):
                rubrics[cid] = rubric_of_points

        run = run_result(summary, results)
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
            sessions=sessions_by,
            dates=dates,
            listed_sessions=listed_sessions,
            rubrics=rubrics,
        )

    @reads
    def get_run_outcomes(self, run_id: str) -> StoredRun:
        """A run without its texts, for comparing runs cheaply (:mod:`evals.analysis.compare`): every test point's
        question, expected fact, stored hit, answerability and evidence outcome, the answers, and each turn's session and date.

        Records, record token counts, strict hits, ranks and transcripts are left
        out (empty lists, ``False``, ``None``, ``{}``): use :meth:`get_run` for those.
        """
        summary = self.get_summary(run_id)
        ids = [row[0] for row in self._con.execute(
            "SELECT conversation_id FROM conversations WHERE corpus_digest = ? ORDER BY position", [summary.corpus_digest]
        ).fetchall()]  # fmt: skip
        rows = self._rows(
            "SELECT tp.conversation_id, tp.turn_index, tp.hit, q.question, q.expected_fact, q.expected_keywords, "
            "coalesce(q.evidence_turns, []) AS evidence, q.category, coalesce(q.answerable, true), "
            "CASE WHEN source_turns IS NULL OR len(source_turns) = 0 THEN record_turns ELSE source_turns END, "
            "tp.ranked_turns, coalesce(q.evidence_sessions, []), tp.ranked_held "
            "FROM test_points tp JOIN corpus_test_points q "
            "ON q.corpus_digest = ? AND q.conversation_id = tp.conversation_id AND q.turn_index = tp.turn_index "
            "WHERE tp.run_id = ? ORDER BY tp.conversation_id, tp.turn_index",
            [summary.corpus_digest, run_id],
        )
        by_conversation: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_conversation.setdefault(row[0], []).append(row)
        # Each turn's session: a headline read off the ranking kept past k (LoCoMo's turn.recall_any@k) needs
        # the ranking, and session-level metrics its sessions.
        shapes = self.conversation_shapes(summary.corpus_digest)
        sessions_of_turns = {row["conversation_id"]: row["sessions"] or [] for row in shapes}
        results: list[ConversationResult] = []
        score_lists: list[list[PointScore]] = []
        for cid in ids:
            result = ConversationResult(conversation_id=cid, description="", turn_count=0)
            scores: list[PointScore] = []
            sessions = sessions_of_turns.get(cid, [])
            # A turn's session, None for no turn or one past the list (as sessions[t] reads it, from the end too).
            session_at = {**dict(enumerate(sessions, -len(sessions))), **dict(enumerate(sessions))}.get
            for (
                _,
                turn_index,
                hit,
                question,
                fact,
                keywords,
                evidence,
                category,
                answerable,
                turns,
                ranked,
                listed,
                held,
            ) in by_conversation.get(cid, []):
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
                    evidence_sessions=list(listed) or sessions_of(evidence, sessions),
                    ranked_turns=ranked,
                    ranked_sessions=list(map(session_at, ranked)) if ranked is not None else None,
                    ranked_held=held,
                    ranked_held_sessions=held_sessions(held, sessions),
                )
                result.test_points.append(point)
                any_, all_ = evidence_hits(point)
                scores.append(PointScore(hit=hit, record_tokens=[], answerable=answerable, evidence_any=any_, evidence_all=all_))
            results.append(result)
            score_lists.append(scores)
        run = run_result(summary, results)
        scores = Scores(tokenizer=summary.tokenizer, conversation_ids=ids, points=score_lists)
        return StoredRun(
            summary=summary,
            run=run,
            scores=scores,
            transcripts={},
            record_turns={},
            answers=self._answers(summary, run),
            # Each turn's session and date (no texts): the compare pages name evidence turns as the benchmark does.
            sessions={row["conversation_id"]: row["sessions"] for row in shapes if row["sessions"]},
            dates={row["conversation_id"]: row["dates"] for row in shapes if row["dates"]},
        )

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
                        f"store {self.path}: run {summary.run_id} has no answer for {result.conversation_id!r} "
                        f"turn {point.turn_index}"
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
            usage=usage_from_json(summary.llm_usage),
            protocol=summary.answer_protocol or "harness",  # a run made before protocols used the harness's prompts
            protocol_source=summary.protocol_source,
        )


def _slices(shape: list[dict[str, Any]], batch_turns: int) -> Iterator[list[dict[str, Any]]]:
    """Consecutive conversations, about ``batch_turns`` turns at a time; one empty slice for no conversation."""
    group: list[dict[str, Any]] = []
    turns = 0
    for row in shape:
        group.append(row)
        turns += row["turn_count"]
        if turns >= batch_turns:
            yield group
            group, turns = [], 0
    if group or not shape:
        yield group


def _summary(row: tuple, metrics: dict[str, MetricValue]) -> RunSummary:
    values = dict(zip(SUMMARY_COLUMNS, row, strict=True))
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
        # The metric, over the headline's test points; a run stored without it, over its answerable ones.
        tokens_per_test_point=tokens.value
        if (tokens := metrics.get("tokens_per_test_point")) is not None
        else values["context_tokens"] / total
        if total
        else None,
        reuse_key=values["cache_key"],
        # Declared metrics first, in declaration order; any the code no longer declares after them.
        metrics=dict(sorted(metrics.items(), key=lambda item: metric_order(item[0]))),
        cache_hits=values["cache_hits"],
        cache_misses=values["cache_misses"],
        strategy_source=values["strategy_source"],
        cutoffs=list(values["cutoffs"] or []),
        cutoff_rule=values["cutoff_rule"],
        benchmark=values["benchmark"],
        rule=stored_rule(values["rule"]) or headline_of(rule_of(values["benchmark"]), metrics, values["k"]).rule,
        corpus_release=values["corpus_release"],
        corpus_file=values["corpus_file"],
        tuned_on=list(values["tuned_on"]) if values["tuned_on"] is not None else None,
        writes_with_llm=values["writes_with_llm"],
        **{name: values[name] for name in ANSWER_COLUMNS if name not in _JSON_COLUMNS},
        **{name: json.loads(values[name]) if values[name] else None for name in _JSON_COLUMNS},
    )


def _failed(row: tuple) -> FailedRun:
    values = dict(zip(FAILED_COLUMNS, row, strict=True))
    values["date"] = values["date"].isoformat()
    values["timestamp"] = values["timestamp"].replace(tzinfo=UTC)
    values["strategy_config"] = json.loads(values["strategy_config"])
    if values["tuned_on"] is not None:
        values["tuned_on"] = list(values["tuned_on"])
    return FailedRun(**values)


def stored_rule(text: str | None) -> Rule | None:
    """The rule a run was appended with (the ``rule`` column's JSON), or None: stored before it was recorded, and read
    as the rule of its benchmark as registered now (what every run was read by before)."""
    if not text:
        return None
    data = json.loads(text)
    known = {f.name for f in dataclasses.fields(Rule)}
    return Rule(**{name: value for name, value in data.items() if name in known})


def outcomes_of(stored: StoredRun) -> StoredRun:
    """What :meth:`StoreReader.get_run_outcomes` reads of a run, taken from the whole run read in full (every
    conversation: :meth:`StoreReader.get_run`, or :meth:`StoreReader.iter_run` in one slice), so a reader that has
    the run already does not read it again. Equal to ``get_run_outcomes`` of the same run (tests/store check it);
    nothing is scored here: every figure is the one the run was read with."""
    results: list[ConversationResult] = []
    score_lists: list[list[PointScore]] = []
    for conversation, scores in zip(stored.run.conversations, stored.scores.points, strict=True):
        result = ConversationResult(conversation_id=conversation.conversation_id, description="", turn_count=0)
        for point in conversation.test_points:
            result.test_points.append(
                TestPointResult(
                    turn_index=point.turn_index,
                    question=point.question,
                    expected_fact=point.expected_fact,
                    expected_keywords=point.expected_keywords,
                    retrieved_records=[],
                    evidence_turns=point.evidence_turns,
                    category=point.category,
                    answerable=point.answerable,
                    retrieved_turns=point.retrieved_turns,
                    evidence_sessions=point.evidence_sessions,
                    ranked_turns=point.ranked_turns,
                    ranked_sessions=point.ranked_sessions,
                    ranked_held=point.ranked_held,
                    ranked_held_sessions=point.ranked_held_sessions,
                )
            )
        results.append(result)
        score_lists.append(
            [
                PointScore(hit=s.hit, record_tokens=[], answerable=s.answerable, evidence_any=s.evidence_any,
                           evidence_all=s.evidence_all)  # fmt: skip
                for s in scores
            ]
        )
    return StoredRun(
        summary=stored.summary,
        run=run_result(stored.summary, results),
        scores=Scores(stored.summary.tokenizer, [c.conversation_id for c in results], score_lists),
        transcripts={},
        record_turns={},
        answers=stored.answers,
        sessions=stored.sessions,
        dates=stored.dates,
    )


def run_result(summary: RunSummary, conversations: list[ConversationResult]) -> RunResult:
    """The play-through of the run ``summary`` describes, holding ``conversations``: the one place a
    stored run becomes a :class:`RunResult` again, for every read path."""
    return RunResult(
        strategy=summary.strategy_config,
        model=summary.model,
        k=summary.k,
        seed=summary.seed,
        corpus_dir=summary.corpus_dir,
        corpus_digest=summary.corpus_digest,
        started_at=summary.timestamp,
        duration_s=summary.duration_s,
        conversations=conversations,
        strategy_source=summary.strategy_source,
        cutoffs=summary.cutoffs,
        # Runs stored before the rule was recorded ranked by prefix, the only rule there was then.
        cutoff_rule=summary.cutoff_rule or PREFIX,
        benchmark=summary.benchmark,
        corpus_release=summary.corpus_release,
        corpus_file=summary.corpus_file,
    )
