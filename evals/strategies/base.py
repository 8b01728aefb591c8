"""The contract every memory strategy keeps, and the optional capabilities it may declare.

A strategy is any object with these members; no inheritance is needed
(``docs/strategies.md`` walks through writing one, and ``evals check-strategy``
tests one against this contract before a long run):

* ``name``: the strategy's registered name.
* ``add(role, content, *, turn)``: remember one conversation turn; ``turn`` is
  its 0-based index in the conversation.
* ``retrieve(query, k)``: the records for ``query``, best first: each a
  :class:`Record`, or a plain ``str`` (a record whose source turn is unknown).
  A record that names its source turn is matched to evidence by that turn, so
  a memory that rewrites what it stores is still scored on evidence recall;
  one that does not is matched by its text (:mod:`evals.model.turn_refs`).
* ``context_for(query, k)``: the chat messages it would put before a model.
* ``reset()``: forget everything; called before each conversation.

A strategy's configuration is not asked of the instance: it is the registered
name plus the validated options (:mod:`evals.strategies.registry`), known
before anything is built.

Optional capabilities are protocols a strategy declares by having the member:
:class:`Prefetching` (embed every text up front with a model of its own; a strategy
that takes the harness's embedder, ``context.embedder(name)``, needs none: the run
fills it up front), :class:`CountsAhead` (which texts a turn may become as records, so
token counting can start early) and :class:`Footprint` (how many records, and
which texts, the memory holds: its size, for latency against size and the
records and tokens held per conversation) and :class:`Flushes` (a memory that buffers
what ``add`` is given and writes it in one batch: the play-through asks it to write before
the next test point, so the write is counted as ingestion, not as the next retrieval).

One optional member is no capability but a confession: :class:`ReadsLabels`
(``read_labels(evidence_turns, evidence_sessions)``) is told the corpus's
answer key, each test point's labelled evidence, just before its
``retrieve``. Only a strategy whose ``StrategySpec`` declares
``reads_labels=True`` is told; the registry then writes ``reads_labels: true``
into the run's configuration (:data:`READS_LABELS`), the play-through passes
the labels only to a run whose configuration says so, and every table and page
marks such a run a ceiling (the ``oracle`` strategy), never a memory to rank.

``add`` may also take ``session`` and ``date`` keywords: a play-through
passes a turn's session id and date (``corpus/README.md``) to a strategy whose
``add`` accepts them (by name, or through ``**kwargs``), and to no other.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, runtime_checkable

__all__ = [
    "READS_LABELS",
    "REQUIRED_MEMBERS",
    "CountsAhead",
    "Flushes",
    "Footprint",
    "MemoryStrategy",
    "Message",
    "Prefetching",
    "ReadsLabels",
    "Record",
    "is_turn_number",
    "lone_surrogate",
    "memories_context",
    "missing_members",
    "record_text",
    "record_turn",
    "held_turns",
]

_SURROGATE = re.compile("[\ud800-\udfff]")

# The methods every strategy has; ``name`` is not asked of it (a run is named by the registry).
REQUIRED_MEMBERS = ("add", "retrieve", "context_for", "reset")

Message = dict[str, str]

# The configuration key that says a run's strategy was told the evidence labels (ReadsLabels): set by
# the registry from the spec, read by the play-through (labels only then) and by every ceiling mark.
READS_LABELS = "reads_labels"


class Record(NamedTuple):
    """One retrieved record: its text, and (when the memory knows them) the turns it holds and a score.

    ``turn`` names one source turn; ``turns`` names every turn the record holds, for a memory whose
    records are sessions, chunks or facts citing several turns (``turn`` may then be left None)."""

    text: str
    turn: int | None = None
    score: float | None = None
    turns: tuple[int, ...] = ()


@runtime_checkable
class MemoryStrategy(typing.Protocol):
    """A memory that is fed a conversation turn by turn and asked to recall."""

    name: str

    def add(self, role: str, content: str, *, turn: int) -> None:
        """Record one turn (``turn``: its index in the conversation)."""

    def retrieve(self, query: str, k: int) -> list[Record | str]:
        """The records retrieved for ``query``, best first (what recall@k scores)."""

    def context_for(self, query: str, k: int) -> list[Message]:
        """The chat messages this memory would put in front of a model for ``query``."""

    def reset(self) -> None:
        """Forget everything; called before each conversation."""


@runtime_checkable
class Prefetching(typing.Protocol):
    """Embeds every text of a corpus ahead of the play-through (in batches, through the cache)."""

    def prefetch(self, texts: Iterable[str], progress: Callable[[int, int, str], None] | None = None) -> None: ...


@runtime_checkable
class CountsAhead(typing.Protocol):
    """Says which texts a turn may turn into as records, so token counting can start early."""

    def record_candidates(self, role: str, content: str) -> tuple[str, ...]: ...


@runtime_checkable
class Footprint(typing.Protocol):
    """Says what the memory holds now: how many records (cheap: asked before every retrieve) and their texts."""

    def held_count(self) -> int: ...

    def held_texts(self) -> Iterable[str]: ...


@runtime_checkable
class Flushes(typing.Protocol):
    """Writes what ``add`` buffered (an index rebuilt, a batch of rows written). The play-through calls it after a
    run of adds, before the next test point's ``retrieve`` and at each conversation's end, and counts its CPU time
    as ingestion (``ingest_cpu_s_per_1k_turns``): a memory that defers its writes to the first search would
    otherwise show an ingestion of nothing and carry the write in its retrieve latency."""

    def flush(self) -> None: ...


@runtime_checkable
class ReadsLabels(typing.Protocol):
    """Is told a test point's labelled evidence just before its ``retrieve`` (and ``context_for``):
    the turn indices in ``evidence_turns`` and the session ids in ``evidence_sessions``, as the corpus
    gives them (either may be empty). Reading the answer key makes a strategy a ceiling, not a memory."""

    def read_labels(self, evidence_turns: Sequence[int], evidence_sessions: Sequence[str]) -> None: ...


def missing_members(strategy: object) -> list[str]:
    """The contract's methods ``strategy`` lacks ([] for a strategy; all four for None or an int)."""
    return [name for name in REQUIRED_MEMBERS if not callable(getattr(strategy, name, None))]


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` (not a character: it cannot be written as UTF-8, so
    cannot be stored or sent), or None. Cheap for ASCII text, which is most text."""
    if text.isascii():  # O(1) in CPython
        return None
    found = _SURROGATE.search(text)
    return found.group() if found else None


def is_turn_number(value: object) -> bool:
    """Whether ``value`` can be a record's source turn: an ``int``, and not a ``bool`` (``True`` is an
    int to Python, but no turn number; the store, rightly, refuses it)."""
    return isinstance(value, int) and not isinstance(value, bool)


def record_text(record: Record | str) -> str:
    return record if isinstance(record, str) else record.text


def record_turn(record: Record | str) -> int | None:
    return None if isinstance(record, str) else record.turn


def held_turns(record: Record | str) -> tuple[int, ...]:
    """Every turn ``record`` says it holds: its ``turns``, else its one ``turn``, else none (a text only)."""
    if isinstance(record, str):
        return ()
    if record.turns:
        return tuple(record.turns)
    return () if record.turn is None else (record.turn,)


def memories_context(records: Sequence[Record], name: str, question: str = "the question") -> list[Message]:
    """``context_for`` of a memory that lists its records: one system message, best first (none for none)."""
    if not records:
        return []
    lines = "\n".join(f"- {r.text}" for r in records)
    return [{"role": "system", "content": f"Memories relevant to {question} ({name}, most relevant first):\n{lines}"}]
