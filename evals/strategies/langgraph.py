"""``langgraph``: LangGraph's long-term memory store, ``InMemoryStore`` with a semantic index.

The store is built with ``index={"dims": 384, "embed": <the harness's MiniLM>,
"fields": ["text"]}``; each turn is one item (``store.batch`` of ``PutOp``s,
key = its position, value = its text, role and turn) in the namespace of the
conversation; retrieval is ``store.search(namespace, query=q, limit=k)``, which
ranks every item by cosine similarity.
"""

from __future__ import annotations

import itertools
from typing import Any

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext, NoOptions

LIBRARY = Library("langgraph", "langgraph", "langgraph")
_NAMESPACES = itertools.count()


class LangGraph(TurnMemory):
    name = "langgraph"

    def __init__(self, context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context)
        self._store: Any = None
        self._namespace: tuple[str, ...] = ()
        self._clear()

    def _clear(self) -> None:
        from langgraph.store.memory import InMemoryStore

        # A fresh store per conversation (dropping the last one is forgetting it), in a namespace of its own.
        self._store = InMemoryStore(index={"dims": self.embedder.dimensions, "embed": self.vectors, "fields": ["text"]})
        self._namespace = ("evals", f"conversation-{next(_NAMESPACES)}")

    def _write(self, turns: list[TurnDocument]) -> None:
        from langgraph.store.base import PutOp

        # InMemoryStore.batch fails on two puts of the same text in one batch (it embeds each distinct text
        # once, then counts the items against the texts): a batch ends before a text it already holds.
        batch: list[PutOp] = []
        texts: set[str] = set()
        for t in turns:
            if t.content in texts:
                self._store.batch(batch)
                batch, texts = [], set()
            batch.append(PutOp(self._namespace, str(t.number), {"text": t.content, "role": t.role, "turn": t.turn}))
            texts.add(t.content)
        self._store.batch(batch)

    def _search(self, query: str, k: int) -> list[Record]:
        found = self._store.search(self._namespace, query=query, limit=k)
        return [Record(item.value["text"], turn_of(item.value), item.score) for item in found]


def _describe(options: NoOptions, context: BuildContext) -> dict[str, Any]:
    return {"name": "langgraph", "langgraph": LIBRARY.version(), "store": "InMemoryStore",
            "index_fields": ["text"], "document": "turn", **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: LangGraph(context),
    _describe,
    "LangGraph's InMemoryStore with a semantic index: one item per turn, store.search on the harness's MiniLM.",
)
