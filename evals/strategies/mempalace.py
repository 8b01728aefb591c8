"""``mempalace``: the mempalace package's own chunks and hybrid search, offline, on the harness's MiniLM.

What the package does with a conversation (mempalace 3.11, ``convo_miner.py``
and ``searcher/``), and what this runner calls of it:

* mining: the conversation as a transcript (each user turn a ``> `` line, the
  reply after it) cut by ``convo_miner.chunk_exchanges`` into exchange-pair
  drawers of at most 800 characters (``CHUNK_SIZE``), small units joined to
  the one before; each record names the turns its drawer holds (``Record.turns``);
* search: ``searcher.search_memories``'s default path: the drawers nearest the
  question in a cosine collection, a pool of 4 x k (``_candidate_pool_limits``:
  ``n_results * 4``), re-ranked by the package's ``searcher._hybrid_rank``
  (0.6 x vector similarity + 0.4 x its Okapi-BM25 over the pool, min-max
  normalised), and cut to k.

Departures, named on the row: the drawers live in a Chroma collection in
memory (``hnsw:space=cosine``, as the palace's) rather than a palace on disk,
and no closets are built (the package's miner files closets for project files;
with none, its search "degrades to pure drawer search"); the embedding is the
harness's MiniLM (all-MiniLM-L6-v2, the model the package's default ONNX
embedder runs, which it would download). A pool of 4 x k makes the top k
depend on k, so each cutoff is its own retrieval (``prefix_stable=False``).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from typing import Any

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, in_batches, quiet
from evals.strategies.base import Record
from evals.strategies.chroma import _embedding_function, ephemeral_client
from evals.strategies.registry import BuildContext

LIBRARY = Library("mempalace", "mempalace", "mempalace")
POOL = 4  # search_memories's vector pool: n_results * _CLOSET_RESULT_POOL_MULTIPLIER
_COLLECTIONS = itertools.count()


def transcript_line(role: str, content: str) -> str:
    """A turn as the miner reads a transcript: a user turn quoted (``> ``), a reply as it is, on one line."""
    text = " ".join(content.split())
    return f"> {text}" if role == "user" else text


class MemPalace(TurnMemory):
    name = "mempalace"

    def __init__(self, context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context)
        quiet()
        from mempalace.convo_miner import chunk_exchanges
        from mempalace.searcher import _hybrid_rank

        self._chunk, self._rank = chunk_exchanges, _hybrid_rank
        self._client = ephemeral_client()
        self._function = _embedding_function(self.embedder)
        self._collection: Any = None
        self._lines: list[str] = []
        self._starts: list[int] = []  # each line's offset in the transcript
        self._turns: list[int] = []  # each line's turn
        self._clear()

    def _clear(self) -> None:
        if self._collection is not None:
            self._client.delete_collection(self._collection.name)
        self._collection = None
        self._lines, self._starts, self._turns = [], [], []
        self._drawers: list[tuple[str, tuple[int, ...]]] = []

    def _write(self, turns: list[TurnDocument]) -> None:
        for t in turns:
            self._starts.append(self._starts[-1] + len(self._lines[-1]) + 1 if self._lines else 0)
            self._lines.append(transcript_line(t.role, t.content))
            self._turns.append(t.turn)
        # The miner chunks a whole transcript: a drawer near the end may grow as turns come, so all are filed anew.
        transcript = "\n".join(self._lines)
        drawers, at = [], 0
        for chunk in self._chunk(transcript):
            text = chunk["content"]
            start = transcript.find(text, at)
            if start < 0:  # a drawer that is no slice of the transcript: name the turns from where the last ended
                start = at
            end = start + len(text)
            first, last = bisect_right(self._starts, start) - 1, bisect_left(self._starts, end)
            drawers.append((text, tuple(self._turns[max(first, 0) : max(last, first + 1)])))
            at = max(at, end)
        if self._collection is not None:
            self._client.delete_collection(self._collection.name)
        self._collection = self._client.create_collection(
            f"mempalace_drawers-{next(_COLLECTIONS)}", embedding_function=self._function, metadata={"hnsw:space": "cosine"}
        )
        in_batches(
            self._collection.add,
            self._client.get_max_batch_size(),
            ids=[f"drawer_{n}" for n in range(len(drawers))],
            documents=[text for text, _ in drawers],
            metadatas=[{"drawer": n} for n in range(len(drawers))],
        )
        self._drawers = drawers

    def _search(self, query: str, k: int) -> list[Record]:
        found = self._collection.query(query_texts=[query], n_results=min(POOL * k, len(self._drawers)))
        hits = [
            {"text": text, "distance": distance, "drawer": meta["drawer"]}
            for text, meta, distance in zip(found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True)
        ]
        ranked = self._rank(hits, query)[:k]
        return [Record(h["text"], None, None, self._drawers[h["drawer"]][1]) for h in ranked]

    def held_count(self) -> int:
        return len(self._drawers) if self._drawers else len(self._texts)


def _describe(options: Any, context: BuildContext) -> dict[str, Any]:
    return {"name": "mempalace", "mempalace": LIBRARY.version(), "chunks": "convo_miner.chunk_exchanges (800 chars)",
            "search": "searcher._hybrid_rank over a 4k cosine pool (0.6 vector + 0.4 BM25)",
            "store": "Chroma in memory, hnsw:space=cosine (not a palace on disk)", "closets": "none", **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: MemPalace(context),
    _describe,
    "The mempalace package's exchange-pair drawers and its hybrid search (vector pool + BM25), on the harness's MiniLM.",
    prefix_stable=False,
    # A drawer holds a slice of the transcript (`> ` before a user turn; a long turn split across drawers).
    derived_records=True,
)
