"""``bm25``: lexical top-k over the earlier turns, with the bm25s library, as its README's quick start uses it.

bm25s's README (https://github.com/xhluca/bm25s, "Quickstart") tokenizes with
``bm25s.tokenize(corpus, stopwords="en", stemmer=Stemmer.Stemmer("english"))``
and ranks with ``bm25s.BM25()`` (k1=1.5, b=0.75, Lucene's IDF): so does this
runner, with the Snowball English stemmer taken from nltk (a main dependency,
:mod:`evals.strategies.words`) rather than PyStemmer, which the README installs
as an option: both are the Snowball English (Porter2) algorithm.
``--option stemmer=none`` keeps the harness's earlier configuration (bm25s's
English stop words, no stemmer), so a reader sees what the stemmer is worth.

The index is rebuilt from the history when turns were added since the last
build, in ``flush()``, which the play-through calls before the next test point
and counts as ingestion (a few hundred short turns take milliseconds), and reused
when none were: imported corpora ask many questions in a row over one history. Only turns sharing a term with the question score
above zero, and only those are returned: a lexical retriever has nothing to
say about the rest. Ties go to the more recent turn.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._turns import RankedTurns
from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec
from evals.strategies.words import STEMMER, stem

K1, B = 1.5, 0.75  # bm25s.BM25()'s defaults


def _stemmed(words: list[str]) -> list[str]:
    return [stem(word) for word in words]


def _tokens(texts: list[str], stemmer: str = "snowball") -> list[list[str]]:
    import bm25s

    stemming = _stemmed if stemmer == "snowball" else None
    return bm25s.tokenize(texts, stopwords="en", stemmer=stemming, return_ids=False, show_progress=False)


class BM25(RankedTurns):
    name = "bm25"

    def __init__(self, stemmer: str = "snowball") -> None:
        import bm25s  # noqa: F401  (loaded as the memory is built: its import is no turn's ingestion)

        super().__init__()
        self.stemmer = stemmer
        self._turn_tokens: list[list[str]] = []  # tokenized once, as turns arrive
        self._index: Any = None  # over the first len(self._turn_tokens) turns

    def _ranked(self, query: str, k: int) -> list[Message]:
        if not self._turns:
            return []
        query_tokens = _tokens([query], self.stemmer)[0]
        if not query_tokens:
            return []
        self.flush()
        scores = self._index.get_scores(query_tokens)
        positions = np.arange(len(scores))
        order = np.lexsort((-positions, -scores))  # by score, then newest first
        return [self._turns[i] for i in order[:k] if scores[i] > 0]

    def flush(self) -> None:
        """The turns added since the last search tokenized and the index rebuilt over every turn (Flushes)."""
        import bm25s

        fresh = self._turns[len(self._turn_tokens) :]
        if self._turns and (fresh or self._index is None):
            self._turn_tokens.extend(_tokens([t["content"] for t in fresh], self.stemmer))
            self._index = bm25s.BM25(k1=K1, b=B)
            self._index.index(self._turn_tokens, show_progress=False)

    def reset(self) -> None:
        super().reset()
        self._turn_tokens.clear()
        self._index = None


class BM25Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stemmer: Literal["snowball", "none"] = Field(
        default="snowball", description="snowball (English, as bm25s's README) or none (words as they are)"
    )


def _describe(options: BM25Options, context: Any) -> dict[str, Any]:
    described: dict[str, Any] = {"name": "bm25", "k1": K1, "b": B, "library": "bm25s", "stopwords": "en"}
    if options.stemmer == "snowball":
        described["stemming"] = STEMMER
    else:  # the departure, under the option's own name, so the row's name says it (evals.views.names)
        described["stemmer"] = options.stemmer
    return described


SPEC = StrategySpec(
    name="bm25",
    build=lambda options, context: BM25(options.stemmer),
    options=BM25Options,
    describe=_describe,
    summary="Lexical top-k over the earlier turns (bm25s, Snowball English stemmer and stop words, as its README).",
)
