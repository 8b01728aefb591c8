"""Plays a corpus through a strategy and records what it retrieved.

For each conversation: ``reset()`` (then ``begin_conversation(id)``, for a
strategy that has it); walk the turns in order; at a turn with
``test_at``, retrieve first and record the records, then ``add`` the turn like
any other. Retrieving before adding is the point: otherwise we would measure
whether memory can find the fact inside the question itself. A turn marked
``record: false`` is played but never added, so several questions asked after
one history each see the history alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from evals.corpus import Corpus
from evals.errors import EvalsError
from evals.results import CallTimings, ConversationResult, RunResult, TestPointResult
from evals.strategies import NO_MODEL, CountsAhead, MemoryStrategy, Record, StrategyError
from evals.turn_refs import TurnLookup, record_turns

__all__ = ["likely_records", "play_corpus"]

Progress = Callable[[int, int, str], None]


def play_corpus(
    corpus: Corpus,
    strategy: MemoryStrategy,
    *,
    k: int = 5,
    seed: int = 42,
    corpus_dir: str | None = None,
    progress: Progress | None = None,
    on_test_point: Callable[[str, TestPointResult, MemoryStrategy], None] | None = None,
    configuration: dict[str, Any] | None = None,
    model: str = NO_MODEL,
    source: str | None = None,
) -> RunResult:
    """Play every conversation of ``corpus`` through ``strategy``.

    ``corpus_dir`` is the folder as the user named it (the result records it
    verbatim, as the original harness did); ``progress`` is called after each
    conversation with (done, total, conversation id). ``configuration`` and
    ``model`` are what the registry planned for the strategy (the result's
    ``strategy`` block; by default just its name).
    """
    started_at = datetime.now(UTC)
    clock = time.perf_counter()
    conversations: list[ConversationResult] = []
    total = len(corpus.conversations)
    # Wall-clock time of every call into the strategy (the library under test, not the harness around it).
    add_ns: list[int] = []
    retrieve_ns: list[int] = []
    begin = getattr(strategy, "begin_conversation", None)
    for done, conversation in enumerate(corpus.conversations, start=1):
        strategy.reset()
        if begin is not None:  # optional: a strategy that seeds or names things per conversation
            begin(conversation.id)
        result = ConversationResult(
            conversation_id=conversation.id,
            description=conversation.description,
            turn_count=len(conversation.turns),
        )
        lookup: TurnLookup | None = None
        for index, turn in enumerate(conversation.turns):
            test = turn.test_at
            if test is not None:
                started = time.perf_counter_ns()
                retrieved = strategy.retrieve(test.question, k)
                retrieve_ns.append(time.perf_counter_ns() - started)
                records = _texts(retrieved, strategy, conversation.id, index)
                retrieved_turns = None
                if test.evidence_turns:
                    lookup = lookup or TurnLookup(conversation)
                    retrieved_turns = _source_turns(retrieved, record_turns(records, lookup, index))
                point = TestPointResult(
                    turn_index=index,
                    question=test.question,
                    expected_fact=test.expected_fact,
                    expected_keywords=list(test.expected_keywords),
                    retrieved_records=records,
                    evidence_turns=list(test.evidence_turns),
                    category=test.category,
                    answerable=test.answerable,
                    retrieved_turns=retrieved_turns,
                )
                result.test_points.append(point)
                if on_test_point is not None:
                    on_test_point(conversation.id, point, strategy)
            if turn.record:
                try:
                    started = time.perf_counter_ns()
                    strategy.add(turn.role, turn.content, turn=index)
                    add_ns.append(time.perf_counter_ns() - started)
                except EvalsError as exc:  # say where (a summary or embedding request failed, say)
                    exc.args = (f"conversation {conversation.id!r}, turn {index}: {exc}", *exc.args[1:])
                    raise
        conversations.append(result)
        if progress is not None:
            progress(done, total, conversation.id)
    return RunResult(
        strategy=configuration if configuration is not None else {"name": strategy.name},
        model=model,
        strategy_source=source,
        timings=CallTimings(add_ns=add_ns, retrieve_ns=retrieve_ns),
        k=k,
        seed=seed,
        corpus_dir=corpus_dir if corpus_dir is not None else str(corpus.directory),
        corpus_digest=corpus.digest,
        started_at=started_at,
        duration_s=time.perf_counter() - clock,
        conversations=conversations,
    )


def likely_records(corpus: Corpus, strategy: MemoryStrategy) -> list[str]:
    """The texts a play-through of ``corpus`` will probably return as records.

    Token counting starts on them while the play-through runs. A strategy can
    say which texts a turn may turn into (``record_candidates(role, content)``;
    by default its content); only turns before a conversation's last test
    point can be retrieved at all.
    """
    candidates = strategy.record_candidates if isinstance(strategy, CountsAhead) else None
    # Each distinct text once, in first-seen order: benchmarks that share sessions between
    # conversations repeat most turns many times, and a candidate is a new string each time.
    texts: dict[str, None] = {}
    for conversation in corpus.conversations:
        last = max((i for i, t in enumerate(conversation.turns) if t.test_at is not None), default=-1)
        for turn in conversation.turns[:last]:
            if not turn.record:
                continue
            if candidates is None:
                texts.setdefault(turn.content)
            else:
                for text in candidates(turn.role, turn.content):
                    texts.setdefault(text)
    return list(texts)


def _texts(retrieved: list[Record | str], strategy: MemoryStrategy, conversation_id: str, before: int) -> list[str]:
    """The records' texts; a record that is neither text nor a :class:`Record` is the strategy's error."""
    if all(type(r) is str for r in retrieved):  # the common case, kept fast: full_history returns hundreds
        return list(retrieved)
    texts = []
    for record in retrieved:
        if isinstance(record, str):
            texts.append(record)
        elif isinstance(record, Record) and isinstance(record.text, str):
            if record.turn is not None and not (isinstance(record.turn, int) and 0 <= record.turn < before):
                raise StrategyError(
                    f"strategy {strategy.name}: conversation {conversation_id!r}, turn {before}: a record names "
                    f"source turn {record.turn!r}, which is not an earlier turn (0..{before - 1})"
                )
            texts.append(record.text)
        else:
            raise StrategyError(
                f"strategy {strategy.name}: conversation {conversation_id!r}, turn {before}: retrieve returned "
                f"a {type(record).__name__}, not a str or Record"
            )
    return texts


def _source_turns(retrieved: list[Record | str], by_text: list[int | None]) -> list[int | None]:
    """Each record's turn: the one it names, else the one its text is (evals.turn_refs)."""
    return [r.turn if isinstance(r, Record) and r.turn is not None else t for r, t in zip(retrieved, by_text, strict=True)]
