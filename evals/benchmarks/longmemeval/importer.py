"""LongMemEval (huggingface xiaowu0162/longmemeval: ``longmemeval_s.json``, ``_m``, ``_oracle``) -> a corpus.

The input is a JSON array of questions, each ``{question_id, question_type,
question, answer, question_date?, haystack_dates?, haystack_session_ids?,
haystack_sessions: [[{role, content, has_answer?}]], answer_session_ids}``.

Every question has its own haystack, so each becomes one conversation: its
haystack sessions' turns in order, then the question as a final turn with
``record: false``. Evidence turns are the turns marked ``has_answer: true``;
the category is ``question_type``; a ``question_id`` ending in ``_abs`` is an
abstention question (the haystack does not hold the answer), so
``answerable: false``.

Each history turn's ``session`` is its session's id in ``haystack_session_ids``
and its ``date`` the session's entry in ``haystack_dates``, verbatim
(``"2023/05/20 (Sat) 02:21"``); the question turn carries ``question_date``.
Either list, when given, must hold one non-empty string per session, and no
session id may appear twice in a haystack (the two sessions would count as one).
``answer_session_ids`` become the test point's ``evidence_sessions`` (in
haystack order); an id that names no session holding a turn is skipped and
counted in the report.

The folder also gets ``references.json`` with the paper's BM25 session-level
row for ``longmemeval_m`` (:data:`REFERENCES`), to show beside runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.benchmarks.kit import (
    ANSWER_KINDS,
    Conversation,
    ImportReport,
    Reference,
    Source,
    answer_keywords,
    answer_text,
    build,
    conversation_id,
    question_turn,
    session_ids,
    write_corpus,
)

__all__ = ["REFERENCES", "import_longmemeval"]

# Wu et al. (2025), the retrieval table: BM25 over sessions of longmemeval_m. Its NDCG is LongMemEval's own
# (ranks 1 and 2 weigh the same), so it sits beside ndcg_any_lme, not beside trec_eval's ndcg_any.
REFERENCES = [
    Reference(
        label="LongMemEval paper, BM25 (session level, _m)",
        citation="Wu et al. 2025, LongMemEval, Table (retrieval)",
        metric=metric,
        level="session",
        k=k,
        value=value,
        note="computed on longmemeval_m only; not re-run here",
    )
    for metric, k, value in (
        ("recall_any", 5, 0.634),
        ("recall_any", 10, 0.710),
        ("ndcg_any_lme", 5, 0.516),
        ("ndcg_any_lme", 10, 0.540),
    )
]


def _conversation(source: Source, item: Any, position: int, report: ImportReport) -> dict[str, Any] | None:
    """The question's conversation, or None (with a note) for a question that cannot be scored."""
    path = f"[{position}]"
    question_id = str(source.get(item, path, "question_id", (str, int)))
    question_type = source.get(item, path, "question_type", str)
    question = source.get(item, path, "question", str)
    answerable = not question_id.endswith("_abs")
    answer = answer_text(source.get(item, path, "answer", ANSWER_KINDS))
    if not answer:  # an empty expected fact would match any record
        report.notes.append(f"{path}: the answer is empty (question skipped)")
        return None
    sessions = source.items(source.get(item, path, "haystack_sessions", list), f"{path}.haystack_sessions")
    ids = source.labels(item, path, "haystack_session_ids", len(sessions))
    if ids:
        first: dict[str, int] = {}
        for number, session_id in enumerate(ids):
            if session_id in first:  # two sessions under one id would be merged into one by every session metric
                raise source.fail(
                    f"{path}.haystack_session_ids[{number}]",
                    f"session id {session_id!r} appears twice (also at [{first[session_id]}]); each session needs its own id",
                )
            first[session_id] = number
    dates = source.labels(item, path, "haystack_dates", len(sessions)) or []
    answer_ids = source.labels(item, path, "answer_session_ids") or []

    turns: list[dict[str, Any]] = []
    evidence: list[int] = []
    for number, session in enumerate(sessions):
        where = f"{path}.haystack_sessions[{number}]"
        session_id = ids[number] if ids else None
        date = dates[number] if dates else None
        for index, turn in enumerate(source.items(session, where)):
            here = f"{where}[{index}]"
            role = source.get(turn, here, "role", str)
            if role not in ("user", "assistant"):
                raise source.fail(f"{here}.role", f"expected 'user' or 'assistant', got {role!r}")
            content = source.get(turn, here, "content", str)
            if source.get(turn, here, "has_answer", bool, required=False):
                evidence.append(len(turns))
            turns.append({"role": role, "content": content, "session": session_id, "date": date})
    if not turns:
        raise source.fail(f"{path}.haystack_sessions", "the haystack holds no turns")
    evidence_sessions, unresolved = session_ids(turns, answer_ids, len(turns))
    if unresolved:
        report.notes.append(f"{path}: {unresolved} answer session ids name no session with turns (skipped)")
    asked = source.get(item, path, "question_date", str, required=False)

    keywords = answer_keywords(answer, "\n".join(turns[t]["content"] for t in evidence)) if answerable else []
    turns.append(
        question_turn(
            report,
            question,
            fact=answer,
            keywords=keywords,
            evidence=evidence,
            category=question_type,
            answerable=answerable,
            sessions=evidence_sessions,
            date=asked if asked and asked.strip() else None,
        )
    )

    span = f"sessions from {dates[0]} to {dates[-1]}" if dates else "sessions"
    return {
        "id": conversation_id(position, question_id, report, "question id"),
        "description": f"LongMemEval {question_id} ({question_type}): {len(sessions)} {span}; "
        f"the question is asked {('on ' + asked) if asked else 'after them'}.",
        "turns": turns,
    }


def import_longmemeval(file: Path, out: Path) -> ImportReport:
    """Read a LongMemEval file and write its corpus into ``out``; return the counts.

    One question at a time: each is read, made into its conversation, written and let go before
    the next is read (the _m file is 2.7 GB; one question is about 7 MB)."""
    with Source.open(file) as source:
        report = ImportReport(source=source.name, out=Path(out))
        if not source.is_array:
            source.data  # noqa: B018 - a file that is not JSON at all says so first
            raise source.fail("", "expected a JSON array of LongMemEval questions (as in longmemeval_s.json)")

        def conversations() -> Iterator[Conversation]:
            for position, item in enumerate(source.elements()):
                data = _conversation(source, item, position, report)
                del item
                if data is not None:
                    yield build(source, f"[{position}]", data)

        report.conversations = write_corpus(conversations(), out, REFERENCES, benchmark="longmemeval")
    return report
