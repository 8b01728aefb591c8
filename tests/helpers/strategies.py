"""Toy strategies the tests write to break or bend one promise of the contract: what they share."""

from __future__ import annotations


class KeepsTurns:
    """A toy memory holding every turn's text in order; by default it retrieves the last k, and its context is
    those turns. A test's strategy subclasses it, names itself and changes the one thing it is about."""

    name = "keeps_turns"

    def __init__(self) -> None:
        self.turns: list[str] = []

    def add(self, role: str, content: str, *, turn: int) -> None:
        self.turns.append(content)

    def retrieve(self, query: str, k: int) -> list:
        return self.turns[-k:]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": t} for t in self.turns[-k:]]

    def reset(self) -> None:
        self.turns.clear()
