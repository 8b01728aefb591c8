"""``txtai``: a txtai ``Embeddings`` index with content storage, one per conversation.

The index's vectors are "external" (``{"method": "external", "transform": <the
harness's MiniLM>}``), so txtai loads no model of its own. Each turn is one
document ``(id, {"text", "turn", "role"})`` (``Embeddings.upsert``, batched);
retrieval is txtai's SQL search, ``select id, text, turn, score from txtai
where similar(:q)``. ``--option mode=``:

* ``dense`` (default): the vectors alone, in txtai's default ANN backend (Faiss);
* ``keyword``: txtai's BM25 scoring index alone (``{"keyword": True}``), no vectors;
* ``hybrid``: both (``{"hybrid": True}``), scores combined as txtai combines them.

``import txtai`` imports onnxruntime, whose telemetry looks up
``mobile.events.data.microsoft.com`` a few seconds later: :func:`quiet`
(``ORT_DISABLE_TELEMETRY=1``) is set before the import.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, quiet, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext

LIBRARY = Library("txtai", "txtai", "txtai")
QUERY = "select id, text, turn, score from txtai where similar(:q)"


def index_config(mode: str, transform: Any = None) -> dict[str, Any]:
    """The ``Embeddings`` configuration for ``mode`` (``transform``: the function that makes vectors)."""
    config: dict[str, Any] = {"content": True}
    if mode != "keyword":
        config.update(method="external", transform=transform, dimensions=EMBEDDING["dimensions"])
    if mode == "keyword":
        config["keyword"] = True
    elif mode == "hybrid":
        config["hybrid"] = True
    return config


class Txtai(TurnMemory):
    name = "txtai"

    def __init__(self, mode: str = "dense", context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context, embeds=mode != "keyword")
        quiet()
        import numpy as np

        self.mode = mode
        self._np = np
        self._index: Any = None
        self._clear()

    def _clear(self) -> None:
        from txtai import Embeddings

        def transform(texts: list[str]) -> Any:  # a plain function: txtai calls any other callable to make one
            return self._np.asarray(self.vectors(list(texts)), dtype=self._np.float32)

        if self._index is not None:
            self._index.close()
        self._index = Embeddings(index_config(self.mode, transform))

    def _write(self, turns: list[TurnDocument]) -> None:
        self._index.upsert([(str(t.number), {"text": t.content, "turn": t.turn, "role": t.role}) for t in turns])

    def _search(self, query: str, k: int) -> list[Record]:
        # txtai's BM25 scores and picks depend on the limit (a limit of 1 can return what ranks third at 3):
        # ranking every document, then cutting, ranks the same way at every k.
        limit = k if self.mode == "dense" else len(self._texts)
        found = self._index.search(QUERY, limit=limit, parameters={"q": query})
        return [Record(hit["text"], turn_of(hit), hit["score"]) for hit in found[:k]]


class TxtaiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["dense", "keyword", "hybrid"] = Field(
        default="dense", description="dense (MiniLM vectors), keyword (txtai's BM25) or hybrid (both)"
    )


def _describe(options: TxtaiOptions, context: BuildContext) -> dict[str, Any]:
    described = {"name": "txtai", "txtai": LIBRARY.version(), "mode": options.mode,
                 "config": {k: v for k, v in index_config(options.mode).items() if k != "transform"}, "document": "turn"}
    return described if options.mode == "keyword" else {**described, **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: Txtai(options.mode, context),
    _describe,
    "txtai Embeddings with content: one document per turn; dense (external MiniLM vectors), keyword BM25 or hybrid.",
    TxtaiOptions,
)
