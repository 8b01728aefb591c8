"""Plays a corpus through a strategy and records what it retrieved.

For each conversation: ``reset()`` (then ``begin_conversation(id)``, for a
strategy that has it); walk the turns in order; at a turn with
``test_at``, retrieve first and record the records, then ``add`` the turn like
any other. Retrieving before adding is the point: otherwise we would measure
whether memory can find the fact inside the question itself. A turn marked
``record: false`` is played but never added, so several questions asked after
one history each see the history alone. A run whose configuration says the
strategy reads labels (``reads_labels``: the oracle) tells it each test point's
evidence turns and sessions, ``read_labels(turns, sessions)``, just before
that test point's retrieval; no other run is told them.

Every call into the strategy is the plug-in's code: whatever it raises
(``SystemExit`` included) becomes one :class:`StrategyError` naming the
strategy, the call and where in the corpus it happened, and what it returns
is checked before anything is kept. ``retrieve`` must return a list (or
tuple) of ``str`` or :class:`Record`, text without lone surrogates; a
retrieval is cut to the depth asked for (a strategy that returns more is
warned about once per run, and the run counts how often: ``long_retrievals``),
except for a strategy that declares it ignores ``k`` (full_history, the
oracle), whose whole list every metric reads. Records past the depth asked are
never seen by any figure.

A :class:`Record` may name every turn it holds (``turns``: a session, a chunk,
a fact citing its sources); each must be an earlier turn. The ranking then
keeps, per rank, the turns the record holds and their sessions
(``ranked_held``), and the evidence they hold is credited
(:mod:`evals.judge.retrieval`).
"""

from __future__ import annotations

import inspect
import logging
import os
import time
from array import array
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from evals.errors import EvalsError
from evals.judge.retrieval import held_sessions, sessions_of
from evals.model.corpus import Conversation, Corpus, TestPoint
from evals.model.results import PER_CUTOFF, PREFIX, WHOLE_LIST, CallTimings, ConversationResult, RunResult, TestPointResult
from evals.model.turn_refs import TurnLookup, locate_records
from evals.strategies import NO_MODEL, CountsAhead, Flushes, Footprint, MemoryStrategy, Record, StrategyError
from evals.strategies._deadline import call_limit
from evals.strategies._faults import PLUGIN_FAULTS, kind_of, plugin_fault
from evals.strategies.base import READS_LABELS, held_turns, is_turn_number, lone_surrogate
from evals.strategies.summary_buffer import fold_summaries

__all__ = ["TURN_KEYWORDS", "likely_records", "play_corpus", "recorded_cutoffs", "run_queue_clock"]

# Turn fields a strategy's add() receives as keywords when it accepts them (corpus/README.md).
TURN_KEYWORDS = ("session", "date")

Progress = Callable[[int, int, str], None]

# Python's last-resort handler prints a warning as its bare message on stderr when nobody configured logging.
log = logging.getLogger(__name__)
MAX_HELD = 2**63 - 1  # what held_count() may say: the store keeps it as a 64-bit integer


def recorded_cutoffs(k: int, cutoffs: Sequence[int]) -> list[int]:
    """The cutoffs a run played at ``k`` with ``cutoffs`` records (:attr:`RunResult.cutoffs`): ``k``
    among them, in order; none when none were asked for (the run is measured at ``k`` only)."""
    return sorted({k, *cutoffs}) if cutoffs else []


def play_corpus(
    corpus: Corpus,
    strategy: MemoryStrategy,
    *,
    k: int = 5,
    seed: int = 42,
    cutoffs: Sequence[int] = (),
    budget: int | None = None,
    ignores_k: bool = False,
    prefix_stable: bool = True,
    count_tokens: Callable[[list[str]], list[int]] | None = None,
    corpus_dir: str | None = None,
    progress: Progress | None = None,
    on_test_point: Callable[[str, TestPointResult, MemoryStrategy, Conversation], None] | None = None,
    configuration: dict[str, Any] | None = None,
    model: str = NO_MODEL,
    source: str | None = None,
    call_timeout: float | None = None,
) -> RunResult:
    """Play every conversation of ``corpus`` through ``strategy``.

    ``corpus_dir`` is the folder as the user named it (the result records it
    verbatim, as the original harness did); ``progress`` is called after each
    conversation with (done, total, conversation id). ``configuration`` and
    ``model`` are what the registry planned for the strategy (the result's
    ``strategy`` block; by default just its name).

    ``cutoffs`` are the depths the retrieval metrics are measured at, beside
    ``k``: a prefix-stable strategy is asked at ``k`` (the timed call, the run's
    retrieve latency) and again, untimed, at the deepest, and the records at
    ``k`` (what recall@k scores) are the first ``k`` of the deepest; one
    that ignores ``k`` hands over everything once; any other is asked once per
    cutoff. ``count_tokens`` (a token counter's ``counts``) gives each
    cutoff's context tokens. With ``budget`` (tokens) and a token counter, a prefix-stable strategy's
    ranking is kept deep enough to fill it, whatever ``k``: asked again, untimed, at twice the depth
    (from the deepest cutoff) until its records' tokens reach the budget or it returns fewer records
    than asked; each ranked record's tokens are kept (``ranked_tokens``), so a figure at a budget of
    tokens reads the memory's ranking up to that budget, not its first ``k`` records.
    ``call_timeout`` (seconds, ``--call-timeout``) stops any one call into
    the strategy that runs longer, as a fault naming the call (:mod:`evals.strategies._deadline`).
    """
    started_at = datetime.now(UTC)
    clock = time.perf_counter()
    rss_reset = reset_peak_rss()
    depths = sorted({k, *cutoffs})
    rule = WHOLE_LIST if ignores_k else PREFIX if prefix_stable else PER_CUTOFF
    name = configuration["name"] if configuration is not None else getattr(strategy, "name", type(strategy).__name__)
    conversations: list[ConversationResult] = []
    total = len(corpus.conversations)
    with call_limit(call_timeout) as limit:
        player = _Player(strategy, name, k, depths, rule, count_tokens, limit)
        player.budget = budget if count_tokens is not None and rule == PREFIX else None
        if configuration is not None and configuration.get(READS_LABELS) is True:
            player.read_labels = _label_reader(strategy, name)
        for done, conversation in enumerate(corpus.conversations, start=1):
            conversations.append(player.play(conversation, on_test_point))
            if progress is not None:
                progress(done, total, conversation.id)
    player.timings.ingest_cpu_ns, player.timings.turns_added = player.ingest_cpu_ns, player.turns_added
    player.timings.peak_rss_kib = peak_rss_kib() if rss_reset else None
    return RunResult(
        strategy=configuration if configuration is not None else {"name": strategy.name},
        model=model,
        strategy_source=source,
        timings=player.timings,
        k=k,
        seed=seed,
        cutoffs=recorded_cutoffs(k, cutoffs),
        cutoff_rule=rule,
        corpus_dir=corpus_dir if corpus_dir is not None else str(corpus.directory),
        corpus_digest=corpus.digest,
        benchmark=corpus.benchmark,
        corpus_release=corpus.release,
        corpus_file=corpus.imported_from,
        started_at=started_at,
        duration_s=time.perf_counter() - clock,
        conversations=conversations,
        long_retrievals=player.long_retrievals,
    )


class _Player:
    """Plays one conversation at a time through one strategy, timing every call into it."""

    def __init__(
        self,
        strategy: MemoryStrategy,
        name: str,
        k: int,
        depths: list[int],
        rule: str,
        count_tokens: Callable[[list[str]], list[int]] | None,
        limit: AbstractContextManager[Any],
    ) -> None:
        self.strategy = strategy
        self.name = name  # the registry's name for it, in every error about it
        self.k = k
        self.depths = depths
        self.rule = rule
        self.count_tokens = count_tokens
        self.limit = limit  # each call into the strategy runs within it (--call-timeout)
        self.budget: int | None = None  # tokens the deepest ranking is to fill (PREFIX with a token counter only)
        self.footprint = strategy if isinstance(strategy, Footprint) else None
        self.flush = strategy.flush if isinstance(strategy, Flushes) else None
        self.ingest_cpu_ns = 0  # CPU time of every add and flush (the calling thread's): ingestion
        self.turns_added = 0
        self.add_keywords = _add_keywords(strategy)
        self.begin = getattr(strategy, "begin_conversation", None)
        self.read_labels: Callable[..., Any] | None = None  # the answer key's door: a reads_labels run only
        # Wall-clock time of every call into the strategy (the library under test, not the harness around it),
        # one machine integer each (an int object and its pointer are five times that: full_history over
        # 100 LongMemEval_m haystacks makes 500,000 adds). Read as sequences of int, as lists are.
        self.timings = CallTimings.model_construct(
            add_ns=array("q"), retrieve_ns=array("q"), retrieve_held=array("q"), retrieve_queued_ns=array("q")
        )
        self.queued = run_queue_clock()  # this thread's time waiting for a processor, where the system says it
        self.warned_long = False  # a retrieval longer than asked for is warned about once per run
        self.long_retrievals = 0  # ... and counted, every time (RunResult.long_retrievals): once a test point
        self.long_here = False  # a call of the test point being played returned more than asked
        self.numbers: list[int] = []  # turn numbers, one object each for the whole run (see _turns_of)
        self.conversation: Conversation | None = None  # the one being played
        self.recorded: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # its recorded turns, once needed

    def _call(self, call: str, method: Callable[..., Any], *args: Any, where: str = "") -> Any:
        """``method(*args)``, a call into the strategy: what it raises becomes one line naming the call."""
        try:
            with self.limit:
                return method(*args)
        except EvalsError as exc:  # already a sentence (a summary or embedding request failed, say): say where
            if where:
                exc.args = (f"{where}: {exc}", *exc.args[1:])
            raise
        except PLUGIN_FAULTS as exc:
            raise plugin_fault(self.name, call, exc, where) from exc

    def play(
        self,
        conversation: Conversation,
        on_test_point: Callable[[str, TestPointResult, MemoryStrategy, Conversation], None] | None,
    ) -> ConversationResult:
        strategy = self.strategy
        where = f"conversation {conversation.id!r}"
        self._call("reset()", strategy.reset, where=where)
        if self.begin is not None:  # optional: a strategy that seeds or names things per conversation
            self._call("begin_conversation()", self.begin, conversation.id, where=where)
        result = ConversationResult(
            conversation_id=conversation.id,
            description=conversation.description,
            turn_count=len(conversation.turns),
            session_count=_session_count(conversation),
        )
        lookup: TurnLookup | None = None
        self.conversation, self.recorded = conversation, None
        sessions = conversation.sessions
        added = flushed = 0
        cpu, ingest = time.thread_time_ns, 0
        # Looked up once, not per turn: a conversation can have tens of thousands of turns.
        add, keywords, clock, add_ns = strategy.add, self.add_keywords, time.perf_counter_ns, self.timings.add_ns
        limit = self.limit
        for index, turn in enumerate(conversation.turns):
            test = turn.test_at
            if test is not None:
                evidence_sessions = _evidence_sessions(test, sessions)
                labelled = bool(test.evidence_turns or evidence_sessions)
                if labelled and lookup is None:
                    lookup = TurnLookup(conversation)
                    # One object per distinct session id: each test point's ranking names a session per
                    # record, and a parsed file has a new string per turn (5,000 a LongMemEval_m haystack).
                    distinct: dict[str | None, str | None] = {}
                    sessions = [distinct.setdefault(session, session) for session in sessions]
                if self.flush is not None and added > flushed:  # what add() buffered, written now: ingestion
                    self._flush(where)
                    flushed = added
                if self.read_labels is not None:  # at test points only: a run without it pays nothing per turn
                    turns, listed = tuple(test.evidence_turns), tuple(test.evidence_sessions)
                    self._call("read_labels()", self.read_labels, turns, listed, where=f"{where}, turn {index}")
                point = self._test_point(conversation.id, index, test, added, lookup if labelled else None, sessions)
                point.evidence_sessions = evidence_sessions
                result.test_points.append(point)
                if on_test_point is not None:  # the answers' collector: it asks the strategy's context_for
                    self._call(
                        "context_for()",
                        on_test_point,
                        conversation.id,
                        point,
                        strategy,
                        conversation,
                        where=f"{where}, turn {index}",
                    )
            if turn.record:
                try:
                    with limit:
                        if keywords:
                            extra = {n: v for n in keywords if (v := getattr(turn, n, None)) is not None}
                            spent, started = cpu(), clock()
                            add(turn.role, turn.content, turn=index, **extra)
                        else:
                            spent, started = cpu(), clock()
                            add(turn.role, turn.content, turn=index)
                        add_ns.append(clock() - started)
                        ingest += cpu() - spent
                except EvalsError as exc:  # say where (a summary or embedding request failed, say)
                    exc.args = (f"{where}, turn {index}: {exc}", *exc.args[1:])
                    raise
                except PLUGIN_FAULTS as exc:
                    raise plugin_fault(self.name, "add()", exc, f"{where}, turn {index}") from exc
                added += 1
        self.ingest_cpu_ns += ingest
        self.turns_added += added
        if self.flush is not None and added > flushed:
            self._flush(where)
        if self.footprint is not None:
            held = self._call("held_texts()", lambda: list(self.footprint.held_texts()), where=where)
            if not set(map(type, held)) <= {str}:  # in C: a memory may hold a hundred thousand texts
                raise StrategyError(f"strategy {self.name}: held_texts() gave something other than text, at {where}")
            result.held_records = len(held)
            result.held_tokens = sum(self.count_tokens(held)) if self.count_tokens is not None else None
        return result

    def _flush(self, where: str) -> None:
        """The strategy's buffered writes made now (:class:`evals.strategies.Flushes`), their CPU time ingestion's."""
        spent = time.thread_time_ns()
        self._call("flush()", self.flush, where=where)
        self.ingest_cpu_ns += time.thread_time_ns() - spent

    def _retrieve(self, question: str, depth: int, added: int, where: str, *, timed: bool = True) -> list[Record | str]:
        """The records for ``question`` at ``depth``, checked to be a list and cut to ``depth`` (unless whole-list).
        ``timed``: the call is the test point's latency (the one at the run's k); a deeper call that only extends
        the ranking is not timed, so the latency is of retrieving k records, whatever the cutoffs."""
        if not timed:
            return self._checked(
                self._call(f"retrieve(question, k={depth})", self.strategy.retrieve, question, depth, where=where), depth, where
            )
        held = added
        if self.footprint is not None:
            held = self._call("held_count()", self.footprint.held_count, where=where)
            if type(held) is not int or not 0 <= held <= MAX_HELD:
                raise StrategyError(f"strategy {self.name}: held_count() returned {held!r:.60}, not a count, at {where}")
        queued = self.queued
        try:
            with self.limit:
                waited = queued() if queued is not None else 0
                started = time.perf_counter_ns()
                retrieved = self.strategy.retrieve(question, depth)
                self.timings.retrieve_ns.append(time.perf_counter_ns() - started)
                if queued is not None:
                    self.timings.retrieve_queued_ns.append(queued() - waited)
        except EvalsError as exc:
            exc.args = (f"{where}: {exc}", *exc.args[1:])
            raise
        except PLUGIN_FAULTS as exc:
            raise plugin_fault(self.name, f"retrieve(question, k={depth})", exc, where) from exc
        self.timings.retrieve_held.append(held)
        return self._checked(retrieved, depth, where)

    def _checked(self, retrieved: Any, depth: int, where: str) -> list[Record | str]:
        """A retrieval checked to be a list, cut to ``depth`` (unless whole-list)."""
        # A generator would be read once by the first check and arrive empty; a dict would give its keys.
        if not isinstance(retrieved, list | tuple) or isinstance(retrieved, Record):
            raise StrategyError(
                f"strategy {self.name}: retrieve(question, k={depth}) returned {kind_of(retrieved)}, not a list "
                f"of str or Record, at {where}"
            )
        if len(retrieved) > depth and self.rule != WHOLE_LIST:
            self.long_here = True  # counted once per test point (_test_point), however many calls it took
            if not self.warned_long:
                self.warned_long = True
                log.warning(
                    "warning: strategy %s: retrieve(question, k=%d) returned %d records, at %s; only the first %d "
                    "are kept (this and any other retrieval longer than asked for, in this run)",
                    self.name, depth, len(retrieved), where, depth,
                )  # fmt: skip
            retrieved = retrieved[:depth]
        return retrieved

    def _test_point(
        self,
        conversation_id: str,
        index: int,
        test: TestPoint,
        added: int,
        lookup: TurnLookup | None,
        sessions: list[str | None],
    ) -> TestPointResult:
        k, depths, rule = self.k, self.depths, self.rule
        where = f"conversation {conversation_id!r}, turn {index}"
        if rule == PER_CUTOFF:
            lists = {}
            for depth in depths:  # each call is timed and counted apart
                self.long_here = False
                lists[depth] = self._retrieve(test.question, depth, added, where)
                self.long_retrievals += self.long_here
            self.long_here = False
        elif rule == PREFIX and depths[-1] > k:
            # The timed call is at k (the run's latency is of retrieving k records); the deeper ranking the other
            # cutoffs read is asked apart, untimed. The records at k are the deeper ranking's first k, as before.
            self._retrieve(test.question, k, added, where)
            lists = {depths[-1]: self._retrieve(test.question, depths[-1], added, where, timed=False)}
        else:
            lists = {depths[-1]: self._retrieve(test.question, depths[-1], added, where)}
        texts = {depth: _texts(found, self.name, where, index) for depth, found in lists.items()}
        counts: list[int] | None = None
        if self.budget is not None:
            lists[depths[-1]], texts[depths[-1]], counts = self._to_budget(
                test.question, lists[depths[-1]], texts[depths[-1]], depths[-1], added, where, index
            )
        records = texts[k] if rule == PER_CUTOFF else texts[depths[-1]] if rule == WHOLE_LIST else texts[depths[-1]][:k]
        point = TestPointResult(
            turn_index=index,
            question=test.question,
            expected_fact=test.expected_fact,
            expected_keywords=list(test.expected_keywords),
            retrieved_records=records,
            evidence_turns=list(test.evidence_turns),
            category=test.category,
            answerable=test.answerable,
            rubric=list(test.rubric),
        )
        if lookup is not None:
            turns = {depth: _source_turns(found, self._turns_of(texts[depth], lookup, index)) for depth, found in lists.items()}
            held = {depth: h for depth, found in lists.items() if (h := _held(found, turns[depth])) is not None}
            if held:
                with_sessions = {depth: (h, held_sessions(h, sessions)) for depth, h in held.items()}
                if rule == PER_CUTOFF:
                    point.cutoff_held = {depth: with_sessions.get(depth, _one_each(turns[depth], sessions)) for depth in turns}
                    point.ranked_held, point.ranked_held_sessions = point.cutoff_held[k]  # the records at k
                else:
                    point.ranked_held, point.ranked_held_sessions = with_sessions[depths[-1]]
            if test.evidence_turns:
                deepest = turns[depths[-1]]
                # The same list as the ranking below when it is as long (full_history's every turn, 5,000 a
                # point over a LongMemEval_m haystack): both are read only, and one copy is enough.
                point.retrieved_turns = (
                    turns[k] if rule == PER_CUTOFF else deepest if len(deepest) == len(records) else deepest[: len(records)]
                )
            ranked = {depth: (t, [sessions[i] if i is not None else None for i in t]) for depth, t in turns.items()}
            if rule == PER_CUTOFF:
                point.cutoff_rankings = ranked
            else:
                point.ranked_turns, point.ranked_sessions = ranked[depths[-1]]
        self.long_retrievals += self.long_here
        self.long_here = False
        if counts is not None and point.ranked_turns is not None:
            point.ranked_tokens = counts
        if self.count_tokens is not None and len(depths) > 1 and rule != WHOLE_LIST:
            if rule == PER_CUTOFF:
                point.cutoff_tokens = {depth: sum(self.count_tokens(found)) for depth, found in texts.items()}
            else:
                counts = counts if counts is not None else self.count_tokens(texts[depths[-1]])
                point.cutoff_tokens = {depth: sum(counts[:depth]) for depth in depths}
        # Kept until the run is stored: a long default summary as the number of turns it folds, not its text.
        point.retrieved_records = fold_summaries(records, self._recorded_turns, added)  # type: ignore[assignment]
        return point

    def _to_budget(
        self, question: str, found: list[Record | str], texts: list[str], asked: int, added: int, where: str, before: int
    ) -> tuple[list[Record | str], list[str], list[int]]:
        """The ranking ``found`` (its ``texts``, asked at ``asked``) made deep enough to fill :attr:`budget` tokens:
        asked again, untimed, at twice the depth, until its tokens reach the budget or the memory returns fewer
        records than asked. Returns the ranking, its texts and each record's tokens."""
        counts = self.count_tokens(texts)
        while sum(counts) < self.budget and len(found) >= asked and asked < MAX_HELD // 2:
            asked *= 2
            found = self._retrieve(question, asked, added, where, timed=False)
            texts = _texts(found, self.name, where, before)
            counts = self.count_tokens(texts)
        return found, texts, counts

    def _recorded_turns(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The conversation's recorded turns (roles, contents), made once per conversation: the corpus's
        own strings, so a folded summary (:func:`fold_summaries`) costs a pointer a turn, once."""
        if self.recorded is None:
            turns = [turn for turn in self.conversation.turns if turn.record]
            self.recorded = (tuple(t.role for t in turns), tuple(t.content for t in turns))
        return self.recorded

    def _turns_of(self, texts: list[str], lookup: TurnLookup, before: int) -> list[int | None]:
        """Per record, the turn it is (evals.model.turn_refs). A run of consecutive turns (full_history's whole
        history) is a slice of one run-wide list of turn numbers, so every test point's list shares its
        int objects instead of making thousands of new ones that the run keeps."""
        refs, _, span = locate_records(texts, lookup, before)
        if span is None:
            return [None if ref < 0 else ref for ref in refs]
        start, stop = span
        if stop > len(self.numbers):
            self.numbers.extend(range(len(self.numbers), stop))
        return self.numbers[start:stop]


def reset_peak_rss() -> bool:
    """Reset this process's resident-memory high-water mark to its resident size now (Linux: "5" written to
    ``/proc/self/clear_refs``); False where the system does not allow it (then no peak is reported: one read
    without the reset would be the process's whole life's, the corpus import and earlier runs included)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return False
    return peak_rss_kib() is not None


def peak_rss_kib() -> int | None:
    """This process's resident-memory high-water mark in KiB (``VmHWM`` of ``/proc/self/status``), or None."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def run_queue_clock() -> Callable[[], int] | None:
    """A clock of the nanoseconds the calling thread has spent ready to run but waiting for a processor (Linux's
    ``/proc/thread-self/schedstat``, second field), or None where there is none. A call's wall time less what
    this clock advanced is what the call would take on an idle machine: it keeps the strategy's own work, its
    sleeps and its I/O, and drops the waiting that other processes' load adds (docs/gate.md)."""
    try:
        clock = _RunQueueClock()
        clock()
    except (OSError, ValueError, IndexError):
        return None
    return clock


class _RunQueueClock:
    """:func:`run_queue_clock`'s clock: the file stays open (one read a call), and is closed with the clock."""

    def __init__(self) -> None:
        self.fd = -1
        self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)  # this thread's, resolved now

    def __call__(self) -> int:
        return int(os.pread(self.fd, 128, 0).split()[1])

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def _add_keywords(strategy: MemoryStrategy) -> tuple[str, ...]:
    """The turn fields beyond role and content (``session``, ``date``) that the strategy's ``add`` accepts."""
    try:
        parameters = inspect.signature(strategy.add).parameters.values()
    except (TypeError, ValueError):  # a builtin or C-implemented add: pass only what the contract names
        return ()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return TURN_KEYWORDS
    names = {p.name for p in parameters if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    return tuple(name for name in TURN_KEYWORDS if name in names)


def _label_reader(strategy: MemoryStrategy, name: str) -> Callable[..., Any]:
    """The ``read_labels`` of a strategy whose configuration says it reads labels; one that lacks it is refused."""
    method = getattr(strategy, "read_labels", None)
    if not callable(method):
        raise StrategyError(
            f"strategy {name}: its configuration says it reads labels ({READS_LABELS}), but it has no "
            "read_labels(evidence_turns, evidence_sessions) method"
        )
    return method


def _evidence_sessions(test: TestPoint, sessions: list[str | None]) -> list[str]:
    """The sessions holding the answer: the test point's own list, else its evidence turns' sessions (first seen first)."""
    return list(test.evidence_sessions) or sessions_of(test.evidence_turns, sessions)


def likely_records(corpus: Corpus, strategy: MemoryStrategy, name: str | None = None, *, held: bool = True) -> list[str]:
    """The texts a play-through of ``corpus`` will probably return as records.

    Token counting starts on them while the play-through runs. A strategy can
    say which texts a turn may turn into (``record_candidates(role, content)``;
    by default its content); only turns before a conversation's last test
    point can be retrieved at all, but a strategy that says what it holds
    (``held_texts``) may hold any turn when the conversation ends (``held``:
    whether what it holds will be counted). They are hints: one that is not text is
    left out, and what ``record_candidates`` raises is the strategy's error
    (``name``: the registry's name for it).
    """
    candidates = strategy.record_candidates if isinstance(strategy, CountsAhead) else None
    # A memory that says what it holds has it counted at each conversation's end: every turn may be held.
    holds = held and isinstance(strategy, Footprint)
    # Each distinct text once, in first-seen order: benchmarks that share sessions between
    # conversations repeat most turns many times, and a candidate is a new string each time.
    texts: dict[str, None] = {}
    try:
        for conversation in corpus.conversations:
            last = (
                len(conversation.turns)
                if holds
                else max((i for i, t in enumerate(conversation.turns) if t.test_at is not None), default=-1)
            )
            for turn in conversation.turns[:last]:
                if not turn.record:
                    continue
                if candidates is None:
                    texts.setdefault(turn.content)
                else:
                    for text in candidates(turn.role, turn.content):
                        if type(text) is str and lone_surrogate(text) is None:
                            texts.setdefault(text)
    except EvalsError:
        raise
    except PLUGIN_FAULTS as exc:
        raise plugin_fault(name or getattr(strategy, "name", type(strategy).__name__), "record_candidates()", exc) from exc
    return list(texts)


def _texts(retrieved: list[Record | str] | tuple[Record | str, ...], strategy: str, where: str, before: int) -> list[str]:
    """The records' texts; a record that is neither text nor a :class:`Record`, or text the store cannot
    keep (a lone surrogate), is the strategy's error (``strategy``, its name; ``where``, the test point)."""
    if all(type(r) is str for r in retrieved):  # the common case, kept fast: full_history returns hundreds
        texts = list(retrieved)
    else:
        texts = []
        for record in retrieved:
            if isinstance(record, str):
                texts.append(record)
            elif isinstance(record, Record) and isinstance(record.text, str):
                if not isinstance(record.turns, tuple | list):
                    raise StrategyError(
                        f"strategy {strategy}: retrieve() returned a Record whose turns are {kind_of(record.turns)}, "
                        f"not a tuple of turn numbers, at {where}"
                    )
                for named in (record.turn, *record.turns):
                    if named is not None and not (is_turn_number(named) and 0 <= named < before):
                        raise StrategyError(
                            f"strategy {strategy}: retrieve() returned a record naming source turn {named!r:.40}, "
                            f"which is not an earlier turn (0..{before - 1}), at {where}"
                        )
                texts.append(record.text)
            elif isinstance(record, Record):
                raise StrategyError(
                    f"strategy {strategy}: retrieve() returned a Record whose text is {kind_of(record.text)}, "
                    f"not a str, at {where}"
                )
            else:
                raise StrategyError(
                    f"strategy {strategy}: retrieve() returned a record that is {kind_of(record)}, "
                    f"not a str or Record, at {where}"
                )
    for text in texts:
        surrogate = lone_surrogate(text)
        if surrogate is not None:
            code = ord(surrogate)
            raise StrategyError(
                f"strategy {strategy}: retrieve() returned a record holding a lone surrogate (\\u{code:04x}), which "
                f"is not a character and cannot be stored, at {where}"
            )
    return texts


def _source_turns(retrieved: list[Record | str], by_text: list[int | None]) -> list[int | None]:
    """Each record's turn: the one it names (its ``turn``, else the first of its ``turns``), else the one its
    text is (evals.model.turn_refs)."""
    if all(type(r) is str for r in retrieved):  # texts name no turn: by_text as it is
        return by_text
    return [
        (r.turn if r.turn is not None else held[0]) if isinstance(r, Record) and (held := held_turns(r)) else t
        for r, t in zip(retrieved, by_text, strict=True)
    ]


def _held(retrieved: list[Record | str], turns: list[int | None]) -> list[list[int]] | None:
    """Per record, every turn it holds (those it names, else the one it is), when some record names several;
    None otherwise (the common case: ``turns`` says it all)."""
    if all(type(r) is str or len(r.turns) < 2 for r in retrieved):
        return None
    out: list[list[int]] = []
    for record, turn in zip(retrieved, turns, strict=True):
        named = held_turns(record)
        out.append(list(dict.fromkeys(named)) if named else [] if turn is None else [turn])
    return out


def _one_each(turns: list[int | None], sessions: list[str | None]) -> tuple[list[list[int]], list[list[str]]]:
    """A cutoff's ranking of one-turn records in the held form (beside cutoffs whose records hold several)."""
    held = [[] if t is None else [t] for t in turns]
    return held, [[s] if t is not None and (s := sessions[t]) is not None else [] for t in turns]


def _session_count(conversation: Conversation) -> int:
    """How many sessions the memory is given (its recorded turns'), else how many turns: what a k reaching it
    returns whole."""
    recorded = [turn for turn in conversation.turns if turn.record]
    sessions = {turn.session for turn in recorded if turn.session is not None}
    return len(sessions) if sessions else len(recorded)
