"""The protocol every memory strategy implements. No inheritance required."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Message", "MemoryStrategy"]

Message = dict[str, str]


@runtime_checkable
class MemoryStrategy(Protocol):
    """A memory that is fed a conversation turn by turn and asked to recall."""

    name: str

    def add(self, role: str, content: str) -> None:
        """Record one turn."""

    def context_for(self, query: str, *, k: int = 5) -> list[Message]:
        """The chat messages this memory would put in front of a model for ``query``. A run
        passes its ``k``, so the model is shown the records that were scored for ``query``."""

    def retrieve_records(self, query: str, *, k: int = 5) -> list[str]:
        """The records retrieved for ``query``, best first (what recall@k scores)."""

    def reset(self) -> None:
        """Forget everything; called before each conversation."""

    def config_summary(self) -> dict[str, Any]:
        """The result's ``strategy`` block: ``name`` plus every setting that changes results."""
