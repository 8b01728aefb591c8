"""``chroma``: Chroma (PyPI ``chromadb``), an in-process client, one collection per conversation.

Each turn is one document (``collection.add``, its turn in the metadata);
retrieval is ``collection.query(query_texts=[q], n_results=k)``. The
collection's embedding function is the harness's MiniLM (Chroma's default one
would download its ONNX model), and the client is ephemeral with Chroma's
telemetry off. Chroma's search is its HNSW index (approximate, ``hnsw:space``
cosine), as a user of Chroma gets it.
"""

from __future__ import annotations

import itertools
from typing import Any

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, in_batches, quiet, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext, NoOptions

LIBRARY = Library("chroma", "chromadb", "chromadb")
SPACE = "cosine"
_COLLECTIONS = itertools.count()


def _embedding_function(embedder: Any) -> Any:
    """The harness's embedder as a Chroma ``EmbeddingFunction``."""
    from chromadb.api.types import EmbeddingFunction

    class HarnessEmbeddings(EmbeddingFunction):
        def __init__(self) -> None:  # Chroma's base asks nothing of it
            pass

        def __call__(self, input: list[str]) -> list[Any]:  # noqa: A002 - Chroma's parameter name
            import numpy as np

            return [np.asarray(v, dtype=np.float32) for v in embedder.embed(list(input))]

        @staticmethod
        def name() -> str:
            return "mneme-evals-minilm"

        def get_config(self) -> dict[str, Any]:
            return {"model": EMBEDDING["model"]}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> Any:  # never rebuilt from a stored config here
            raise NotImplementedError

    return HarnessEmbeddings()


def ephemeral_client() -> Any:
    """An in-process Chroma client with telemetry off (Chroma allows one set of settings per process)."""
    quiet()
    import chromadb
    from chromadb.config import Settings

    return chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))


class Chroma(TurnMemory):
    name = "chroma"

    def __init__(self, context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context)
        self._client = ephemeral_client()
        self._function = _embedding_function(self.embedder)
        self._collection: Any = None
        self._clear()

    def _clear(self) -> None:
        if self._collection is not None:
            self._client.delete_collection(self._collection.name)
        self._collection = self._client.create_collection(
            f"evals-{next(_COLLECTIONS)}", embedding_function=self._function, metadata={"hnsw:space": SPACE}
        )

    def _write(self, turns: list[TurnDocument]) -> None:
        in_batches(
            self._collection.add,
            self._client.get_max_batch_size(),
            ids=[str(t.number) for t in turns],
            documents=[t.content for t in turns],
            metadatas=[{"turn": t.turn, "role": t.role} for t in turns],
        )

    def _search(self, query: str, k: int) -> list[Record]:
        found = self._collection.query(query_texts=[query], n_results=min(k, len(self._texts)))
        return [
            Record(text, turn_of(meta), 1.0 - distance)
            for text, meta, distance in zip(found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True)
        ]


def _describe(options: NoOptions, context: BuildContext) -> dict[str, Any]:
    return {"name": "chroma", "chromadb": LIBRARY.version(), "client": "EphemeralClient",
            "index": f"hnsw:{SPACE}", "document": "turn", **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: Chroma(context),
    _describe,
    "Chroma (chromadb): one document per turn in an in-process collection, HNSW search on the harness's MiniLM.",
)
