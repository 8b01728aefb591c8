"""``summary_buffer``: the last few turns verbatim plus a rolling summary of the rest.

This is the shape of LangChain's summary-buffer memory. Without an LLM, the
default summariser concatenates the evicted turns (so summaries nest and grow);
pass ``summarize_fn`` to plug in a real summariser.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies.base import Message
from evals.strategies.registry import BuildContext, StrategySpec

SummarizeFn = Callable[[list[Message]], str]

DEFAULT_RECENT_TURNS = 6
MAX_RECENT_TURNS = 1_000_000  # more than any conversation has: a bigger number is a typo, refused before a run
_HEAD = "Earlier in the conversation: "


def concatenate_summary(messages: list[Message]) -> str:
    """The default summariser: no model, just the messages joined in order."""
    return _HEAD + " | ".join(f"{m['role']}: {m['content']}" for m in messages)


class _NestedConcatenation:
    """What repeated :func:`concatenate_summary` calls produce, built only when read.

    Folding each evicted turn into the previous summary copies an ever longer
    string at every turn; keeping the parts and joining them on demand gives
    the identical text at a fraction of the cost.
    """

    def __init__(self) -> None:
        self._depth = 0
        self._parts: list[str] = []
        self._text: str | None = None

    def fold(self, message: Message) -> None:
        self._depth += 1
        self._parts.append(f"{message['role']}: {message['content']}")
        self._text = None

    def text(self) -> str:
        if self._text is None:
            self._text = f"{_HEAD}system: " * (self._depth - 1) + _HEAD + " | ".join(self._parts)
        return self._text


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
        self._summary: str | _NestedConcatenation | None = None

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._recent.append({"role": role, "content": content})
        while len(self._recent) > self._max_recent:
            evicted = self._recent.popleft()
            if self._summarize is concatenate_summary:
                if self._summary is None:
                    self._summary = _NestedConcatenation()
                self._summary.fold(evicted)
            else:
                previous = [{"role": "system", "content": self._summary}] if self._summary is not None else []
                self._summary = self._summarize([*previous, evicted])

    def summary(self) -> str | None:
        if isinstance(self._summary, _NestedConcatenation):
            return self._summary.text()
        return self._summary

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        summary = self.summary()
        head = [{"role": "system", "content": summary}] if summary is not None else []
        return [*head, *self._recent]

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        summary = self.summary()
        records = [summary] if summary is not None else []
        records.extend(t["content"] for t in self._recent)
        return records[:k]

    def reset(self) -> None:
        self._recent.clear()
        self._summary = None

    def held_count(self) -> int:
        return len(self._recent) + (self._summary is not None)

    def held_texts(self) -> Iterable[str]:
        summary = self.summary()
        return [*([summary] if summary is not None else []), *(t["content"] for t in self._recent)]

    def record_candidates(self, role: str, content: str) -> tuple[str, ...]:
        """Texts worth counting ahead for a turn. With the default summariser,
        nearly every turn ends up as a joint of the summaries (the piece the
        token counter cuts them into); the few recent turns a test point
        shows verbatim are counted when needed."""
        if self._summarize is concatenate_summary:
            return (f" | {role}: {content}",)
        return (content,)


class SummaryBufferOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_recent_turns: int = Field(default=DEFAULT_RECENT_TURNS, ge=1, le=MAX_RECENT_TURNS, description="turns kept verbatim")


def _build(options: SummaryBufferOptions, context: BuildContext) -> SummaryBuffer:
    summarize = context.summarize_fn if context.summarize_fn is not None else concatenate_summary
    return SummaryBuffer(max_recent_turns=options.max_recent_turns, summarize_fn=summarize)


def _describe(options: SummaryBufferOptions, context: BuildContext) -> dict[str, Any]:
    return {
        "name": "summary_buffer",
        "max_recent_turns": options.max_recent_turns,
        # The LLM summariser when answers are on (named after its model), else the concatenation.
        "summarize_fn": context.summarizer or concatenate_summary.__name__,
    }


SPEC = StrategySpec(
    name="summary_buffer",
    build=_build,
    options=SummaryBufferOptions,
    describe=_describe,
    summary="The last turns verbatim plus a rolling summary of the rest.",
)
