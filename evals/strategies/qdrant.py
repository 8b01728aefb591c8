"""``qdrant``: Qdrant's Python client in local mode (``QdrantClient(":memory:")``), one collection per conversation.

Each turn is one point (``upsert``, its turn in the payload), with the
harness's MiniLM vector (cosine). ``--option mode=``:

* ``dense`` (default): ``query_points`` on the MiniLM vector;
* ``sparse``: BM25 as Qdrant documents it (https://qdrant.tech/documentation/search/text-search/,
  "BM25 with fastembed"): a sparse vector per turn from fastembed's
  ``Bm25("Qdrant/bm25")`` (``fastembed/sparse/bm25.py``: term weights k1=1.2,
  b=0.75, avg_len=256 over Snowball-stemmed words without English stop words,
  indices MurmurHash3; the query's words weigh 1.0) in a collection with
  Qdrant's ``IDF`` modifier, which computes the IDF over the collection.
  The words are made as fastembed makes them (:mod:`evals.strategies.words`),
  with one departure the row names: the stop words are NLTK's English list
  from llama-index-core's copy, because fastembed downloads its own;
* ``hybrid``: both, as Qdrant's hybrid-queries example does it
  (https://qdrant.tech/documentation/search/hybrid-queries/, snippet
  ``query-points/hybrid-rrf-sparse``): ``query_points(prefetch=[sparse limit 20,
  dense limit 20], query=FusionQuery(RRF))``, so a ranking holds at most 40 points.
  The prefetch limit is fixed, not k, so the top k is the same at every k.

``--option tokenizer=plain`` keeps the harness's earlier words (``\\w+`` lower-cased,
no stemmer, no stop words, CRC-32 indices) and ``--option prefetch=0`` the
earlier hybrid, each prefetch ranking every point: what those choices cost is
on the board beside the documented defaults (docs/strategies.md).

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
from evals.strategies.words import STEMMER, STOPWORDS_SOURCE, fastembed_words, token_id

LIBRARY = Library("qdrant", "qdrant-client", "qdrant_client")
DENSE, SPARSE = "dense", "sparse"
K1, B, AVERAGE_LENGTH = 1.2, 0.75, 256.0  # fastembed's Bm25 defaults
PREFETCH = 20  # each prefetch's limit in Qdrant's hybrid-queries example
_WORD = re.compile(r"\w+")
_COLLECTIONS = itertools.count()


def _plain_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def sparse_terms(text: str, tokenizer: str = "fastembed") -> tuple[list[int], list[float]]:
    """A text's BM25 term weights as a sparse vector (indices, values): fastembed's words and MurmurHash3
    indices, or (``plain``) lower-cased ``\\w+`` words and CRC-32 indices."""
    plain = tokenizer == "plain"
    counts = Counter(_plain_words(text) if plain else fastembed_words(text))
    length = sum(counts.values())
    weights: dict[int, float] = {}
    for word, tf in counts.items():
        index = zlib.crc32(word.encode("utf-8")) if plain else token_id(word)
        weight = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / AVERAGE_LENGTH))
        weights[index] = weights.get(index, 0.0) + weight
    indices = sorted(weights)
    return indices, [weights[i] for i in indices]


class Qdrant(TurnMemory):
    name = "qdrant"

    def __init__(
        self, mode: str = "dense", context: BuildContext | None = None, *, tokenizer: str = "fastembed",
        prefetch: int = PREFETCH,
    ) -> None:
        LIBRARY.require()
        super().__init__(context, embeds=mode != "sparse")
        from qdrant_client import QdrantClient, models

        self.mode = mode
        self.tokenizer = tokenizer
        self.prefetch_limit = prefetch
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
            indices, values = sparse_terms(t.content, self.tokenizer)
            vectors: dict[str, Any] = {SPARSE: models.SparseVector(indices=indices, values=values)}
            if vector is not None:
                vectors[DENSE] = vector
            payload = {"text": t.content, "turn": t.turn, "role": t.role}
            points.append(models.PointStruct(id=t.number, vector=vectors, payload=payload))
        self._client.upsert(self._collection, points=points)

    def _search(self, query: str, k: int) -> list[Record]:
        models = self._models
        indices, values = sparse_terms(query, self.tokenizer)
        sparse = models.SparseVector(indices=indices, values=[1.0] * len(values))
        if self.mode == "dense":
            found = self._client.query_points(self._collection, query=self.vectors([query])[0], using=DENSE, limit=k)
        elif self.mode == "sparse":
            found = self._client.query_points(self._collection, query=sparse, using=SPARSE, limit=k)
        else:
            # A limit that is not k keeps the fusion's top k the same at every k; 0: every point ranked by both.
            depth = self.prefetch_limit or len(self._texts)
            found = self._client.query_points(
                self._collection,
                prefetch=[
                    models.Prefetch(query=sparse, using=SPARSE, limit=depth),
                    models.Prefetch(query=self.vectors([query])[0], using=DENSE, limit=depth),
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
    tokenizer: Literal["fastembed", "plain"] = Field(
        default="fastembed",
        description="sparse words: fastembed's Bm25 (Snowball stemmer, English stop words) or plain (\\w+ lower-cased)",
    )
    prefetch: int = Field(
        default=PREFETCH, ge=0, description="hybrid: each prefetch's limit (Qdrant's example: 20; 0: every point)"
    )


def _describe(options: QdrantOptions, context: BuildContext) -> dict[str, Any]:
    # An option that departs from the default is recorded under its own name and value, so the row's name says
    # it (evals.views.names).
    described: dict[str, Any] = {"name": "qdrant", "qdrant-client": LIBRARY.version(),
                                 "client": "QdrantClient(':memory:')", "mode": options.mode, "document": "turn"}
    if options.mode != "sparse":
        described.update(EMBEDDING, distance="cosine")
    if options.mode != "dense" and options.tokenizer == "plain":
        described.update(tokenizer="plain",
                         sparse="bm25 k1=1.2 b=0.75 avg_len=256, idf modifier, \\w+ lower-cased, crc32 indices")
    elif options.mode != "dense":
        described.update(sparse="fastembed Bm25('Qdrant/bm25'): k1=1.2 b=0.75 avg_len=256, idf modifier, murmur3 indices",
                         stemmer=STEMMER, stopwords=STOPWORDS_SOURCE)
    if options.mode == "hybrid":
        described.update(fusion="rrf", prefetch=options.prefetch)
    return described


SPEC = LIBRARY.spec(
    lambda options, context: Qdrant(options.mode, context, tokenizer=options.tokenizer, prefetch=options.prefetch),
    _describe,
    "Qdrant (qdrant-client, local :memory:): one point per turn; dense MiniLM, sparse BM25+IDF or hybrid RRF.",
    QdrantOptions,
)
