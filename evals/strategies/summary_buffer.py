"""``summary_buffer``: the last few turns verbatim plus a rolling summary of the rest.

This is the shape of LangChain's summary-buffer memory. Without an LLM, the
default summariser concatenates the evicted turns (so summaries nest and grow);
pass ``summarize_fn`` to plug in a real summariser.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field

from evals.model.tokens import DIGEST_ABOVE
from evals.strategies.base import Message
from evals.strategies.registry import BuildContext, StrategySpec

SummarizeFn = Callable[[list[Message]], str]

DEFAULT_RECENT_TURNS = 6
MAX_RECENT_TURNS = 1_000_000  # more than any conversation has: a bigger number is a typo, refused before a run
_HEAD = "Earlier in the conversation: "


def concatenate_summary(messages: list[Message]) -> str:
    """The default summariser: no model, just the messages joined in order."""
    return _HEAD + " | ".join(f"{m['role']}: {m['content']}" for m in messages)


def nested_summary(roles: Sequence[str], contents: Sequence[str], depth: int) -> str:
    """What :func:`concatenate_summary` gives after the first ``depth`` of these turns were evicted one
    at a time, each folded into the previous summary: the head once per fold, ``system: `` between."""
    parts = (f"{role}: {content}" for role, content in islice(zip(roles, contents, strict=True), depth))
    return f"{_HEAD}system: " * (depth - 1) + _HEAD + " | ".join(parts)


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
        if self._text is None:  # nested_summary's text, from the parts made as the turns were folded
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


# A default summary longer than this (characters) is kept in a run's result as the number of turns
# it folds (FoldedRecords), not as text: over a LongMemEval_m haystack it is 6.7 M characters a test
# point, and a run of 100 such points held 670 MB of summaries until its append. The token counter
# remembers such texts' counts by digest from the same length on.
FOLD_ABOVE = DIGEST_ABOVE
_NEST = f"{_HEAD}system: "


def fold_summaries(records: list[str], turns: Callable[[], tuple[Sequence[str], Sequence[str]]], before: int) -> Sequence[str]:
    """``records`` with each long default summary of the first n recorded turns (n <= ``before``, the
    test point's recorded turns) kept as n: a :class:`FoldedRecords` that gives the same texts, or
    ``records`` itself when there is none.

    ``turns()`` gives the conversation's recorded turns in order (roles, contents), the same objects
    for all its test points; it is called only when a record is long. A summary is folded only when
    rebuilding it gives its text exactly, so whichever strategy made a text, the records read back
    are the texts it returned.
    """
    if max(map(len, records), default=0) <= FOLD_ABOVE:
        return records
    roles, contents = turns()
    folded: list[str | int] | None = None
    for position, text in enumerate(records):
        if len(text) <= FOLD_ABOVE or not text.startswith(_HEAD):
            continue
        depth, at = 1, 0
        while text.startswith(_NEST, at):
            depth, at = depth + 1, at + len(_NEST)
        if depth <= before and text == nested_summary(roles, contents, depth):
            folded = folded if folded is not None else list(records)
            folded[position] = depth
    return records if folded is None else FoldedRecords(folded, roles, contents)


# (contents, depth, text) of the summary a FoldedRecords rebuilt last; contents is held, so never mistaken.
_last_read: list[Any] = [None, 0, ""]


class FoldedRecords(Sequence[str]):
    """A test point's records, each a text or the number of turns a default summary folds, read as
    texts: the summary is rebuilt (:func:`nested_summary`) each time it is read and not kept, so a run
    holds a few numbers and one tuple of its conversation's turns where it held the summaries' text.

    Everything that reads records (scoring, token counts, the store, the result document) iterates
    or indexes them and sees the texts the strategy returned; ``==`` compares them as texts."""

    __slots__ = ("_contents", "_items", "_roles")

    def __init__(self, items: list[str | int], roles: Sequence[str], contents: Sequence[str]) -> None:
        self._items = items
        self._roles = roles
        self._contents = contents

    def _text(self, item: str | int) -> str:
        if isinstance(item, str):
            return item
        # The summary read last, kept (one for all records): readers often read the same one twice in a row.
        last = _last_read
        if last[0] is self._contents and last[1] == item:
            return last[2]
        text = nested_summary(self._roles, self._contents, item)
        _last_read[:] = (self._contents, item, text)
        return text

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._text(item) for item in self._items[index]]
        return self._text(self._items[index])

    def __iter__(self) -> Iterator[str]:
        return map(self._text, self._items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment] - compared by content, like the list it stands for

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (a Ray task's result) as what it holds
        return FoldedRecords, (self._items, self._roles, self._contents)

    def __repr__(self) -> str:
        shown = ", ".join(repr(i) if isinstance(i, str) else f"<summary of {i} turns>" for i in self._items)
        return f"FoldedRecords([{shown}])"


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
