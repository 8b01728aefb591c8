"""``chroma_mempalace_text``: Chroma with MemPalace's benchmark document text (its LoCoMo script's raw mode).

Named for what runs: Chroma. The mempalace package's own search is the
``mempalace`` runner (:mod:`evals.strategies.mempalace`). MemPalace's
``benchmarks/locomo_bench.py`` (first published at commit 0f8fa8c7; "Session, no
rerank 60.3%", "Dialog, no rerank 48.0%" in ``benchmarks/BENCHMARKS.md``, the
per-question file ``results_locomo_raw_session_top10_*.json`` at 61d02e10) in
raw mode puts a conversation's documents into a fresh Chroma collection
(``create_collection("mempal_drawers")``: Chroma's default space, L2) and
queries it with the question, ``n_results=min(top_k, len(corpus))``. Raw mode
calls nothing of the ``mempalace`` package itself (only its ``aaak`` mode
does), so this runner reproduces it with the same library, Chroma, and the same
document text, built by :func:`dialog_text` and :func:`session_text` from each
turn as the LoCoMo importer writes it (``"Speaker: text"``, plus
``" [shares caption]"``, which MemPalace leaves out):

* ``granularity=dialog`` (default): one document per turn,
  ``Speaker said, "text"``; each record names its turn;
* ``granularity=session``: one document per session, its turns' dialog texts
  joined by newlines (rewritten as the session grows); each record names every
  turn of its session (``Record.turns``).

The embedding function is the harness's MiniLM, all-MiniLM-L6-v2 as Chroma's
default would use it (that one would download its ONNX copy), so nothing is
downloaded. A turn with no ``Speaker:`` prefix is said by its role.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._field import EMBEDDING, Library, TurnDocument, TurnMemory, in_batches
from evals.strategies.base import Record
from evals.strategies.chroma import _embedding_function, ephemeral_client
from evals.strategies.registry import BuildContext

LIBRARY = Library("chroma_mempalace_text", "chromadb", "chromadb", extra="chroma")
SOURCE = "MemPalace/mempalace benchmarks/locomo_bench.py @ 9b7cfc99, mode raw"
_COLLECTIONS = itertools.count()
# "Caroline: text" or "Caroline: text [shares a photo of ...]", as evals.benchmarks.locomo's importer writes a turn.
_SPOKEN = re.compile(r"(?P<speaker>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?): (?P<text>.*?)(?: \[shares [^\]]*\])?", re.DOTALL)


def dialog_text(role: str, content: str) -> str:
    """A turn as MemPalace's benchmark writes it: ``Speaker said, "text"``."""
    spoken = _SPOKEN.fullmatch(content)
    speaker, text = (spoken["speaker"], spoken["text"]) if spoken else (role, content)
    return f'{speaker} said, "{text}"'


def session_text(dialogs: list[str]) -> str:
    return "\n".join(dialogs)


class ChromaMemPalaceText(TurnMemory):
    name = "chroma_mempalace_text"

    def __init__(self, granularity: str = "dialog", context: BuildContext | None = None) -> None:
        LIBRARY.require()
        super().__init__(context)
        self.granularity = granularity
        self._client = ephemeral_client()
        self._function = _embedding_function(self.embedder)
        self._collection: Any = None
        self._clear()

    def add(self, role: str, content: str, *, turn: int | None = None, session: str | None = None, **_: Any) -> None:
        super().add(role, content, turn=turn)
        text, index = dialog_text(role, content), self._pending[-1].turn
        self._dialogs.append(text)
        key = session if session is not None else f"turn-{index}"
        dialogs, turns = self._sessions.setdefault(key, ([], []))
        dialogs.append(text)
        turns.append(index)
        self._touched[key] = None

    def _clear(self) -> None:
        if self._collection is not None:
            self._client.delete_collection(self._collection.name)
        self._dialogs: list[str] = []
        self._sessions: dict[str, tuple[list[str], list[int]]] = {}  # session -> its dialog texts and turns
        self._touched: dict[str, None] = {}  # sessions grown since the last write
        name = f"mempal_drawers-{next(_COLLECTIONS)}"
        self._collection = self._client.create_collection(name, embedding_function=self._function)

    def _write(self, turns: list[TurnDocument]) -> None:
        if self.granularity == "dialog":
            in_batches(
                self._collection.add,
                self._client.get_max_batch_size(),
                ids=[f"doc_{t.number}" for t in turns],
                documents=[self._dialogs[t.number] for t in turns],
                metadatas=[{"turn": t.turn} for t in turns],
            )
        else:
            touched = list(self._touched)
            in_batches(
                self._collection.upsert,
                self._client.get_max_batch_size(),
                ids=touched,
                documents=[session_text(self._sessions[key][0]) for key in touched],
                metadatas=[{"session": key} for key in touched],
            )
        self._touched = {}

    def _search(self, query: str, k: int) -> list[Record]:
        found = self._collection.query(query_texts=[query], n_results=min(k, self.held_count()))
        records = []
        for text, meta, distance in zip(found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True):
            if self.granularity == "dialog":
                records.append(Record(text, meta["turn"], -distance))
            else:
                records.append(Record(text, None, -distance, tuple(self._sessions[meta["session"]][1])))
        return records

    def held_count(self) -> int:
        return len(self._dialogs) if self.granularity == "dialog" else len(self._sessions)

    def held_texts(self) -> list[str]:
        if self.granularity == "dialog":
            return list(self._dialogs)
        return [session_text(dialogs) for dialogs, _ in self._sessions.values()]


class ChromaMemPalaceTextOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    granularity: Literal["dialog", "session"] = Field(
        default="dialog", description="one document per turn (dialog) or per session (session), as MemPalace's raw mode"
    )


def _describe(options: ChromaMemPalaceTextOptions, context: BuildContext) -> dict[str, Any]:
    document = " per turn" if options.granularity == "dialog" else ", a session's joined by newlines"
    return {"name": "chroma_mempalace_text", "reproduces": SOURCE, "granularity": options.granularity,
            "chromadb": LIBRARY.version(), "client": "EphemeralClient", "index": "hnsw:l2",
            "document": 'Speaker said, "text"' + document, **EMBEDDING}


SPEC = LIBRARY.spec(
    lambda options, context: ChromaMemPalaceText(options.granularity, context),
    _describe,
    "Chroma with MemPalace's benchmark text (its LoCoMo script's raw mode): dialog or session documents, on MiniLM.",
    ChromaMemPalaceTextOptions,
    # MemPalace's own document text (`Speaker said, "text"`, image captions dropped) rewrites each turn it holds.
    derived_records=True,
)
