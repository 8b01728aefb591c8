"""``mneme``: the library under test, one ``MemoryManager`` per run.

Each turn is written twice, to working memory and to the episodic tier, the
way Mneme's own framework adapters do; retrieval is ``manager.retrieve``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any, Literal

import mneme
from pydantic import BaseModel, ConfigDict, Field

from evals.errors import EvalsError
from evals.strategies.base import Message
from evals.strategies.embedders import EMBEDDER_NAMES, EMBEDDERS, openai_endpoint
from evals.strategies.registry import BuildContext, StrategySpec

# How Mneme's context_for cites a record: "[EPISODE id=<random hex> score=0.158]".
_RECORD_ID = re.compile(r"\[(EPISODE|FACT) id=([0-9A-Za-z-]+)")


def _sqlite_module_that_loads_extensions():
    """A sqlite3-compatible module able to load sqlite-vec, or an EvalsError saying what to install.

    Some Python builds (pyenv's among them) compile ``sqlite3`` without
    extension loading; ``pysqlite3-binary`` ships one that has it.
    """
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        from pysqlite3 import dbapi2
    except ImportError:
        raise EvalsError(
            "--backend sqlite needs a sqlite3 module that can load extensions; this Python's "
            "cannot (no enable_load_extension). Install one with: pip install pysqlite3-binary"
        ) from None
    return dbapi2


def _backend(name: str, dimensions: int) -> Any:
    if name == "memory":
        return mneme.InMemoryBackend()
    if name == "sqlite":
        try:
            import sqlite_vec  # noqa: F401
        except ImportError:
            raise EvalsError("--backend sqlite needs the sqlite-vec package: pip install sqlite-vec") from None
        import mneme.backends.sqlite as sqlite_backend

        # Mneme's backend imports the stdlib module by name; point that name at
        # one that can load extensions. Same SQLite engine, same numbers.
        sqlite_backend.sqlite3 = _sqlite_module_that_loads_extensions()
        try:
            return mneme.SQLiteBackend(path=":memory:", dimensions=dimensions)
        except Exception as exc:  # noqa: BLE001 - surface the cause, not a traceback
            raise EvalsError(f"--backend sqlite could not start: {type(exc).__name__}: {exc}") from exc
    raise EvalsError(f"unknown backend {name!r}; choose memory or sqlite")


class Mneme:
    name = "mneme"

    def __init__(self, *, backend: str = "memory", embedder: str = "hash", context: BuildContext | None = None) -> None:
        # The harness's embedder (one per run, shared with every memory that embeds with the same model).
        self._embedder = (context or BuildContext()).embedder(embedder)
        self.model = EMBEDDERS[embedder].model
        self._backend = _backend(backend, self._embedder.dimensions)
        self.manager = mneme.MemoryManager(agent_id="eval", backend=self._backend, embedder=self._embedder)
        # The two tiers' add, looked up once: add() runs once per turn.
        self._add_working, self._add_episodic = self.manager.working.add, self.manager.episodic.add

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._add_working(role=role, content=content)
        self._add_episodic(content, metadata={"role": role, "source": "eval"})

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        """Mneme's own prompt context, with each record's random id replaced by its
        order of citation, so the same memories give the same prompt (and the same
        cached answer) on every run."""
        from mneme.adapters import context_for

        ids: dict[str, str] = {}

        def stable(match: re.Match[str]) -> str:
            return f"[{match.group(1)} id=" + ids.setdefault(match.group(2), f"m{len(ids) + 1}")

        messages = context_for(self.manager, query, k=k, token_budget=None)
        return [{**m, "content": _RECORD_ID.sub(stable, m["content"])} for m in messages]

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return [r.record.content for r in self.manager.retrieve(query, k=k)]

    def reset(self) -> None:
        self.manager.clear_all()

    def held_count(self) -> int:
        records = self._own_records()
        if records is not None:
            return len(records)
        return self._backend.count(agent_id=self.manager.agent_id)

    def held_texts(self) -> Iterable[str]:
        records = self._own_records()
        if records is not None:
            return [record.content for record in records.values()]
        held = self.held_count()
        return [
            record.content
            for tier in mneme.MemoryTier
            for record in self._backend.list_recent(agent_id=self.manager.agent_id, tier=tier, limit=max(held, 1))
        ]

    def _own_records(self) -> dict[str, Any] | None:
        """The in-memory backend's records, when they can be read directly (else None).

        The footprint is asked for before every retrieve. ``count`` and ``list_recent`` scan and
        sort every record each time; the backend is this strategy's alone, so every record it
        holds is this agent's, and their number and texts are the same read straight off it.
        """
        if type(self._backend) is not mneme.InMemoryBackend:
            return None
        records = getattr(self._backend, "_records", None)
        return records if isinstance(records, dict) else None



BACKEND_CLASSES = {"memory": "InMemoryBackend", "sqlite": "SQLiteBackend"}


class MnemeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["memory", "sqlite"] = Field(default="memory", description="storage backend")
    # The embedder table's names (evals.strategies.embedders.EMBEDDERS), the one place they are decided.
    embedder: Literal[EMBEDDER_NAMES] = Field(default="hash", description="embedder")  # type: ignore[valid-type]


def _describe(options: MnemeOptions, context: BuildContext) -> dict[str, Any]:
    kind = EMBEDDERS[options.embedder]
    # The wrapped embedder's class: the cache changes no vector, so it is not the configuration.
    described = {
        "name": "mneme",
        "backend": BACKEND_CLASSES[options.backend],
        "embedder": kind.cls,
        "dimensions": kind.dimensions,
        "model": kind.model,
    }
    if options.embedder == "openai":  # another server's vectors are another run (and another reuse key)
        described["embedding_base_url"] = openai_endpoint()
    return described


SPEC = StrategySpec(
    name="mneme",
    build=lambda options, context: Mneme(backend=options.backend, embedder=options.embedder, context=context),
    options=MnemeOptions,
    describe=_describe,
    summary="Mneme (smolAmem): working memory plus the episodic tier, retrieved by manager.retrieve.",
)
