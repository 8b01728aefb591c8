"""A test-only plug-in memory that embeds with the harness's model: cosine top-k over the earlier
turns, its vectors taken from ``context.embedder("minilm")``, never from a model of its own.

tests/strategies/test_embed_once.py runs it beside mneme and mem0 to count the embeddings a suite computes.
Referenced as ``cosine_strategy:make`` with tests/plugins on the path.
"""

from __future__ import annotations

from evals.strategies import BuildContext, Record


class Cosine:
    name = "cosine"

    def __init__(self, context: BuildContext) -> None:
        self._embedder = context.embedder("minilm")
        self._turns: list[tuple[int, str, list[float]]] = []

    def add(self, role: str, content: str, *, turn: int) -> None:
        self._turns.append((turn, content, self._embedder.embed([content])[0]))

    def retrieve(self, query: str, k: int) -> list[Record]:
        if not self._turns:
            return []
        wanted = self._embedder.embed([query])[0]
        scored = sorted(self._turns, key=lambda t: -sum(a * b for a, b in zip(wanted, t[2], strict=True)))
        return [Record(text, turn=turn) for turn, text, _ in scored[:k]]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return [{"role": "system", "content": r.text} for r in self.retrieve(query, k)]

    def reset(self) -> None:
        self._turns.clear()


def make(context: BuildContext) -> Cosine:
    """Cosine top-k over the earlier turns, with the harness's all-MiniLM-L6-v2."""
    return Cosine(context)
