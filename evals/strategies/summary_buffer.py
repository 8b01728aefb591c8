"""``summary_buffer``: the last few turns verbatim plus a rolling summary of the rest.

This is the shape of LangChain's summary-buffer memory. Without an LLM, the
default summariser concatenates the evicted turns (so summaries nest and grow);
pass ``summarize_fn`` to plug in a real summariser.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from evals.strategies.base import Message

SummarizeFn = Callable[[list[Message]], str]

DEFAULT_RECENT_TURNS = 6


def concatenate_summary(messages: list[Message]) -> str:
    """The default summariser: no model, just the messages joined in order."""
    return "Earlier in the conversation: " + " | ".join(f"{m['role']}: {m['content']}" for m in messages)


class SummaryBuffer:
    name = "summary_buffer"

    def __init__(
        self,
        *,
        max_recent_turns: int = DEFAULT_RECENT_TURNS,
        summarize_fn: SummarizeFn = concatenate_summary,
    ) -> None:
        self._max_recent = max_recent_turns
        self._summarize = summarize_fn
        self._recent: deque[Message] = deque()
        self._summary: str | None = None

    def add(self, role: str, content: str) -> None:
        self._recent.append({"role": role, "content": content})
        while len(self._recent) > self._max_recent:
            evicted = self._recent.popleft()
            previous = [{"role": "system", "content": self._summary}] if self._summary is not None else []
            self._summary = self._summarize([*previous, evicted])

    def context_for(self, query: str) -> list[Message]:
        head = [{"role": "system", "content": self._summary}] if self._summary is not None else []
        return [*head, *self._recent]

    def retrieve_records(self, query: str, *, k: int = 5) -> list[str]:
        records = [self._summary] if self._summary is not None else []
        records.extend(t["content"] for t in self._recent)
        return records[:k]

    def reset(self) -> None:
        self._recent.clear()
        self._summary = None

    def config_summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_recent_turns": self._max_recent,
            "summarize_fn": getattr(self._summarize, "__name__", type(self._summarize).__name__),
        }
