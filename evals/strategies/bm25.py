"""``bm25``: lexical top-k over the earlier turns, with the bm25s library.

The index is rebuilt from the history at a retrieval when turns were added
since the last one (a few hundred short turns take milliseconds), and reused
when none were: imported corpora ask many questions in a row over one history. Only turns sharing a term with the question score
above zero, and only those are returned: a lexical retriever has nothing to
say about the rest. Ties go to the more recent turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evals.strategies._turns import RankedTurns
from evals.strategies.base import Message
from evals.strategies.registry import StrategySpec

K1, B = 1.5, 0.75


def _tokens(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


class BM25(RankedTurns):
    name = "bm25"

    def __init__(self) -> None:
        super().__init__()
        self._turn_tokens: list[list[str]] = []  # tokenized once, as turns arrive
        self._index: Any = None  # over the first len(self._turn_tokens) turns

    def _ranked(self, query: str, k: int) -> list[Message]:
        import bm25s

        if not self._turns:
            return []
        query_tokens = _tokens([query])[0]
        if not query_tokens:
            return []
        fresh = self._turns[len(self._turn_tokens) :]
        if fresh or self._index is None:
            self._turn_tokens.extend(_tokens([t["content"] for t in fresh]))
            self._index = bm25s.BM25(k1=K1, b=B)
            self._index.index(self._turn_tokens, show_progress=False)
        scores = self._index.get_scores(query_tokens)
        positions = np.arange(len(scores))
        order = np.lexsort((-positions, -scores))  # by score, then newest first
        return [self._turns[i] for i in order[:k] if scores[i] > 0]

    def reset(self) -> None:
        super().reset()
        self._turn_tokens.clear()
        self._index = None


SPEC = StrategySpec(
    name="bm25",
    build=lambda options, context: BM25(),
    describe=lambda options, context: {"name": "bm25", "k1": K1, "b": B, "library": "bm25s", "stopwords": "en"},
    summary="Lexical top-k over the earlier turns (bm25s).",
)
