"""``lancedb``: LanceDB, in memory (``lancedb.connect("memory://")``), one table per conversation.

Each turn is one row (its text, turn, role and the harness's MiniLM vector).
LanceDB makes a table version per ``add``, so the turns are added in one batch
before each search (the memory's pending turns, in ``flush()``, which a
play-through calls before the next test point and counts as ingestion), not one
by one. ``--option mode=``:

* ``vector`` (default): ``table.search(vector).metric("cosine")``, exact (no ANN index);
* ``fts``: LanceDB's native full-text index (BM25; ``create_index("text", config=FTS())``,
  rebuilt after each batch), ``query_type="fts"``, at LanceDB's defaults
  (https://lancedb.com/docs/search/full-text-search/ and ``FTS``'s docstring in
  ``lancedb/index.py``: the ``simple`` tokenizer, English, lower-cased, stemmed,
  English stop words removed, ASCII folding); ``--option tokenizer=plain``
  turns the stemmer and the stop words off (``FTS(stem=False, remove_stop_words=False)``),
  so a reader sees what they are worth;
* ``hybrid``: both, fused by LanceDB's default reranker for hybrid search,
  ``RRFReranker``; each side ranks every row, so the top k is the same at every k.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, lancedb_words, quiet, turn_of
from evals.strategies.base import Record
from evals.strategies.registry import BuildContext

LIBRARY = Library("lancedb", "lancedb", "lancedb")
COLUMNS = ["text", "turn"]
_TABLES = itertools.count()


class LanceDB(TurnMemory):
    name = "lancedb"

    def __init__(self, mode: str = "vector", context: BuildContext | None = None, *, tokenizer: str = "default") -> None:
        LIBRARY.require()
        super().__init__(context, embeds=mode != "fts")
        quiet()
        import lancedb

        self.mode = mode
        self.tokenizer = tokenizer
        self._db = lancedb.connect("memory://")
        self._table: Any = None
        self._name = ""

    def _clear(self) -> None:
        if self._table is not None:
            self._db.drop_table(self._name)
        self._table = None

    def _write(self, turns: list[TurnDocument]) -> None:
        import pyarrow as pa

        columns: dict[str, Any] = {
            "text": pa.array([t.content for t in turns], pa.string()),
            "turn": pa.array([t.turn for t in turns], pa.int64()),
            "role": pa.array([t.role for t in turns], pa.string()),
        }
        if self.embedder is not None:
            dimensions = EMBEDDING["dimensions"]
            columns["vector"] = pa.array(self.vectors([t.content for t in turns]), pa.list_(pa.float32(), dimensions))
        batch = pa.table(columns)
        if self._table is None:
            self._name = f"evals-{next(_TABLES)}"
            self._table = self._db.create_table(self._name, data=batch)
        else:
            self._table.add(batch)
        if self.mode != "vector":
            from lancedb.index import FTS

            plain = {"stem": False, "remove_stop_words": False} if self.tokenizer == "plain" else {}
            self._table.create_index("text", config=FTS(**plain), replace=True)

    def _search(self, query: str, k: int) -> list[Record]:
        if self.mode == "vector":
            search = self._table.search(self.vectors([query])[0]).metric("cosine")
            found = search.select([*COLUMNS, "_distance"]).limit(k).to_list()
            return [Record(row["text"], turn_of(row), 1.0 - row["_distance"]) for row in found]
        if self.mode == "fts":
            words = lancedb_words(query, "text")
            found = self._table.search(words, query_type="fts").select([*COLUMNS, "_score"]).limit(k).to_list()
            return [Record(row["text"], turn_of(row), row["_score"]) for row in found]
        from lancedb.rerankers import RRFReranker

        search = self._table.search(query_type="hybrid").vector(self.vectors([query])[0]).text(lancedb_words(query, "text"))
        found = search.metric("cosine").rerank(RRFReranker()).limit(len(self._texts)).to_list()
        return [Record(row["text"], turn_of(row), row["_relevance_score"]) for row in found[:k]]


class LanceDBOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["vector", "fts", "hybrid"] = Field(
        default="vector", description="vector (MiniLM, cosine), fts (LanceDB's BM25 full-text index) or hybrid (both, RRF)"
    )
    tokenizer: Literal["default", "plain"] = Field(
        default="default", description="full text: LanceDB's default (stemmed, English stop words out) or plain (neither)"
    )


def _describe(options: LanceDBOptions, context: BuildContext) -> dict[str, Any]:
    described: dict[str, Any] = {"name": "lancedb", "lancedb": LIBRARY.version(), "uri": "memory://",
                                 "mode": options.mode, "document": "turn", "writes": "one add per batch of turns"}
    if options.mode != "fts":
        described.update(EMBEDDING, metric="cosine", index="none (exact)")
    if options.mode != "vector":
        described.update(fts="native FTS index on text")
        if options.tokenizer == "plain":  # a departure from LanceDB's defaults, under the option's name
            described.update(tokenizer="plain", fts_options="stem=False remove_stop_words=False")
    if options.mode == "hybrid":
        described.update(reranker="RRFReranker", limit="every row")
    return described


SPEC = LIBRARY.spec(
    lambda options, context: LanceDB(options.mode, context, tokenizer=options.tokenizer),
    _describe,
    "LanceDB in memory: one row per turn, added in batches; vector (MiniLM), fts (BM25) or hybrid (RRF).",
    LanceDBOptions,
)
