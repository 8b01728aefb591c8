"""An example plug-in strategy for mneme-evals: the k turns sharing the most words with the question.

Installed, it is ``evals run --runner keyword_overlap``; its options are the
factory's keyword parameters (``--option min_shared=2``).
"""

from __future__ import annotations

import re

from evals.strategies import Record

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


class KeywordOverlap:
    name = "keyword_overlap"

    def __init__(self, min_shared: int) -> None:
        self.min_shared = min_shared
        self._turns: list[tuple[int, str, str, set[str]]] = []

    def add(self, role: str, content: str, *, turn: int) -> None:
        self._turns.append((turn, role, content, _words(content)))

    def _top(self, query: str, k: int) -> list[tuple[int, int, str, str]]:
        wanted = _words(query)
        scored = [(len(words & wanted), turn, role, content) for turn, role, content, words in self._turns]
        hits = [s for s in scored if s[0] >= self.min_shared]
        return sorted(hits, key=lambda s: (-s[0], -s[1]))[:k]

    def retrieve(self, query: str, k: int) -> list[Record]:
        # Each record names the turn it came from, so evidence recall matches it by turn.
        return [Record(content, turn=turn, score=float(shared)) for shared, turn, _, content in self._top(query, k)]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for _, _, role, content in self._top(query, k)]

    def reset(self) -> None:
        self._turns.clear()


def make_memory(min_shared: int = 1) -> KeywordOverlap:
    """The k turns sharing the most words (of 3+ letters) with the question."""
    return KeywordOverlap(min_shared=min_shared)
