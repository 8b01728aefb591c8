"""A test-only strategy whose LLM answered its writes but which wrote nothing: every turn "asks its LLM"
(a memory-write tally, as mem0 with infer=true, graphiti and cognee keep one), nothing is stored, and every
retrieve finds nothing, as mem0 does when every extraction reply is prose.

Referenced as ``mute_writer:SPEC`` with tests/plugins on the path."""

from __future__ import annotations

from evals.model.results import RequestTally
from evals.strategies import spec_from_factory


class MuteWriter:
    name = "mute_writer"

    def __init__(self, *, replies: bool = True) -> None:
        self.write_usage = RequestTally("toy-model")
        self._replies = replies

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        if self._replies:
            self.write_usage.add(10, 2, False, "toy-model", None)

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return []

    def context_for(self, query: str, k: int = 5) -> list[dict[str, str]]:
        return []

    def reset(self) -> None:
        pass


def make(replies: bool = True) -> MuteWriter:
    """A memory that writes nothing; ``replies``: whether its LLM is counted as having answered each turn."""
    return MuteWriter(replies=replies)


SPEC = spec_from_factory("mute_writer", make)
