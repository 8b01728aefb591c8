"""``qdrant``: Qdrant's Python client in local mode (``QdrantClient(":memory:")``), one collection per conversation.

Each turn is one point (``upsert``, its turn in the payload), with the
harness's MiniLM vector (cosine). ``--option mode=``:

* ``dense`` (default): ``query_points`` on the MiniLM vector;
* ``sparse``: lexical, on a sparse vector per turn with Qdrant's ``IDF``
  modifier (Qdrant computes the IDF over the collection; the vector's values
  are BM25 term weights, k1=1.2, b=0.75, as fastembed's ``Qdrant/bm25`` model
  makes them, over lower-cased word tokens without its stemmer or stop words:
  that model would be downloaded);
* ``hybrid``: both, fused by Qdrant's reciprocal rank fusion
  (``query_points(prefetch=[dense, sparse], query=FusionQuery(RRF))``), each
  prefetch ranking every point, so the top k is the same at every k.

Local mode searches exactly (no HNSW), in process, with no server and no network.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext

LIBRARY = Library("qdrant", "qdrant-client", "qdrant_client")
DENSE, SPARSE = "dense", "sparse"
K1, B, AVERAGE_LENGTH = 1.2, 0.75, 256.0  # fastembed's Bm25 defaults
_WORD = re.compile(r"\w+")
_COLLECTIONS = itertools.count()


def sparse_terms(text: str) -> tuple[list[int], list[float]]:
    """A text's BM25 term weights as a sparse vector: (indices, values), indices the CRC-32 of each word."""
    counts = Counter(_WORD.findall(text.lower()))
    length = sum(counts.values())
    weights: dict[int, float] = {}
    for word, tf in counts.items():
        index = zlib.crc32(word.encode("utf-8"))
        weight = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / AVERAGE_LENGTH))
        weights[index] = weights.get(index, 0.0) + weight
    indices = sorted(weights)
    return indices, [weights[i] for i in indices]


class Qdrant(TurnMemory):
    name = "qdrant"

    def __init__(self, mode: str = "dense", context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context, embeds=mode != "sparse")
        from qdrant_client import QdrantClient, models

        self.mode = mode
        self._models = models
        self._client = QdrantClient(":memory:")
        self._collection: str | None = None
        self._clear()

    def _clear(self) -> None:
        models = self._models
        if self._collection is not None:
            self._client.delete_collection(self._collection)
        self._collection = f"evals-{next(_COLLECTIONS)}"
        self._client.create_collection(
            self._collection,
            vectors_config={DENSE: models.VectorParams(size=EMBEDDING["dimensions"], distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )

    def _write(self, turns: list[TurnDocument]) -> None:
        models = self._models
        dense = self.vectors([t.content for t in turns]) if self.embedder is not None else [None] * len(turns)
        points = []
        for t, vector in zip(turns, dense, strict=True):
            indices, values = sparse_terms(t.content)
            vectors: dict[str, Any] = {SPARSE: models.SparseVector(indices=indices, values=values)}
            if vector is not None:
                vectors[DENSE] = vector
            payload = {"text": t.content, "turn": t.turn, "role": t.role}
            points.append(models.PointStruct(id=t.number, vector=vectors, payload=payload))
        self._client.upsert(self._collection, points=points)

    def _search(self, query: str, k: int) -> list[Record]:
        models = self._models
        indices, values = sparse_terms(query)
        sparse = models.SparseVector(indices=indices, values=[1.0] * len(values))
        if self.mode == "dense":
            found = self._client.query_points(self._collection, query=self.vectors([query])[0], using=DENSE, limit=k)
        elif self.mode == "sparse":
            found = self._client.query_points(self._collection, query=sparse, using=SPARSE, limit=k)
        else:
            depth = len(self._texts)  # every point ranked by both: the fusion's top k is then the same at every k
            found = self._client.query_points(
                self._collection,
                prefetch=[
                    models.Prefetch(query=self.vectors([query])[0], using=DENSE, limit=depth),
                    models.Prefetch(query=sparse, using=SPARSE, limit=depth),
                ],
                query=models.FusionQuery(fusion=models.Fusion.RRF),
                limit=k,
            )
        return [Record(p.payload["text"], turn_of(p.payload), p.score) for p in found.points]


class QdrantOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["dense", "sparse", "hybrid"] = Field(
        default="dense", description="dense (MiniLM), sparse (BM25 weights with Qdrant's IDF) or hybrid (both, RRF)"
    )


def _describe(options: QdrantOptions, context: BuildContext) -> dict[str, Any]:
    described: dict[str, Any] = {"name": "qdrant", "qdrant-client": LIBRARY.version(),
                                 "client": "QdrantClient(':memory:')", "mode": options.mode, "document": "turn"}
    if options.mode != "sparse":
        described.update(EMBEDDING, distance="cosine")
    if options.mode != "dense":
        described.update(sparse="bm25 k1=1.2 b=0.75 avg_len=256, idf modifier, \\w+ lower-cased, crc32 indices")
    if options.mode == "hybrid":
        described.update(fusion="rrf", prefetch="every point")
    return described


SPEC = LIBRARY.spec(
    lambda options, context: Qdrant(options.mode, context),
    _describe,
    "Qdrant (qdrant-client, local :memory:): one point per turn; dense MiniLM, sparse BM25+IDF or hybrid RRF.",
    QdrantOptions,
)
