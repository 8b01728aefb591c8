"""``llamaindex_vector_block``: LlamaIndex's ``VectorMemoryBlock`` (llama-index-core), one block of its ``Memory``, alone.

Named for what runs: the vector block used as a per-turn store, not
``Memory`` as its documentation sets it up (that is the ``llamaindex`` runner,
:mod:`evals.strategies.llamaindex`, where a LoCoMo conversation mostly stays in
the short-term chat history and no block is asked).

``Memory`` flushes its short-term queue into its blocks with
``block.aput(messages)``, a batch of messages at a time (a user turn and its
reply become one node), and reads them back with ``block.aget(messages)``,
which returns the retrieved nodes as one text. So that each turn is one node,
as for the other runners, each turn is put alone: ``block.aput([ChatMessage])``;
the node's text is LlamaIndex's own, ``<message role='user'>content</message>``.
Retrieval is ``block.aget([ChatMessage(user, question)])`` with
``similarity_top_k=k``; the block's node postprocessors (its extension point)
see the scored nodes, and :class:`_Records` keeps them as the records.

Two things make it run offline here:

* the embedding model is :class:`_HarnessEmbedding`, a ``BaseEmbedding`` that
  asks the harness's MiniLM (``Settings.embed_model`` would be OpenAI's);
* the block refuses a vector store that does not keep text, and the only
  in-memory store the core ships, ``SimpleVectorStore``, keeps none:
  :func:`_text_store` is a small subclass that keeps each node beside its
  vector and gives the nodes back with a query's ids (its search, exact
  cosine, is unchanged). It also notes each node's turn in its metadata.
"""

from __future__ import annotations

import asyncio
from typing import Any

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, quiet, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext, NoOptions

LIBRARY = Library("llamaindex_vector_block", "llama-index-core", "llama_index.core", extra="llamaindex")


def _harness_embedding(embedder: Any) -> Any:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class HarnessEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return embedder.embed([query])[0]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embedder.embed([query])[0]

        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(list(texts))

    return HarnessEmbedding(model_name=EMBEDDING["model"], embed_batch_size=256)


def _text_store() -> Any:
    """A ``SimpleVectorStore`` that keeps its nodes' text (and each node's turn, from ``turn``)."""
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.vector_stores import SimpleVectorStore

    class TextKeepingVectorStore(SimpleVectorStore):
        stores_text: bool = True
        turn: int | None = None  # the turn of the node being added
        _nodes: dict[str, Any] = PrivateAttr(default_factory=dict)

        def add(self, nodes: list[Any], **kwargs: Any) -> list[str]:
            for node in nodes:
                node.metadata["turn"] = self.turn
                self._nodes[node.node_id] = node
            return super().add(nodes, **kwargs)

        def query(self, query: Any, **kwargs: Any) -> Any:
            result = super().query(query, **kwargs)
            result.nodes = [self._nodes[i] for i in result.ids]
            return result

    return TextKeepingVectorStore()


def _records_postprocessor() -> Any:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    class _Records(BaseNodePostprocessor):
        """Keeps the scored nodes the block retrieved (and passes them on unchanged)."""

        found: list[Any] = []

        def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
            self.found = list(nodes)
            return nodes

    return _Records()


class LlamaIndexVectorBlock(TurnMemory):
    name = "llamaindex_vector_block"

    def __init__(self, context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context)
        quiet()
        self._embedding = _harness_embedding(self.embedder)
        self._block: Any = None
        self._clear()

    def _clear(self) -> None:
        from llama_index.core.memory import VectorMemoryBlock

        self._records = _records_postprocessor()
        self._store = _text_store()
        self._block = VectorMemoryBlock(
            vector_store=self._store, embed_model=self._embedding, node_postprocessors=[self._records]
        )

    def _write(self, turns: list[TurnDocument]) -> None:
        from llama_index.core.llms import ChatMessage

        # The node texts, embedded in one batch first (each aput then finds its vector at hand).
        self.vectors([f"<message role='{t.role}'>{t.content}</message>" for t in turns])

        async def put_each() -> None:
            for t in turns:
                self._store.turn = t.turn
                await self._block.aput([ChatMessage(role=t.role, content=t.content)])

        asyncio.run(put_each())

    def _search(self, query: str, k: int) -> list[Record]:
        from llama_index.core.llms import ChatMessage

        self._block.similarity_top_k = k
        self._records.found = []
        asyncio.run(self._block.aget([ChatMessage(role="user", content=query)]))
        return [Record(hit.node.get_content(), turn_of(hit.node.metadata), hit.score) for hit in self._records.found]


def _describe(options: NoOptions, context: BuildContext) -> dict[str, Any]:
    return {"name": "llamaindex_vector_block", "llama-index-core": LIBRARY.version(),
            "block": "VectorMemoryBlock", "vector_store": "SimpleVectorStore keeping text",
            "document": "turn, put alone: <message role='…'>content</message>", **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: LlamaIndexVectorBlock(context),
    _describe,
    "LlamaIndex's VectorMemoryBlock: one node per turn (<message role=…>), exact cosine on the harness's MiniLM.",
)
