"""Which conversation turn each retrieved record is: the one place records are mapped to turns.

Strategies return records as strings. A record equal to the content of a
recorded turn before the test point *is* that turn; anything else (a summary,
say) is no turn. Evidence recall, the store's compact encoding of records and
the site's transcript tags all use this mapping, so they always agree.

Identical contents are ambiguous, and text alone cannot settle them. The rules:

* Records that are exactly the last n turns before the test point, in order
  (full_history's whole history, a sliding window), are those turns; so are
  records that are exactly every recorded turn before it, in order.
* Otherwise each record is the **most recent** recorded turn with its content
  not already given to an earlier record of the same test point (so two equal
  records stay two distinct turns); when all are taken, the most recent. Most
  recent, because that is the copy a strategy most plausibly holds: windows and
  buffers keep the newest turns, and a store that deduplicates by text keeps
  the last write. It also means that when an answer is restated, retrieving
  the text credits the restatement, not an older turn nobody can tell apart.

Turns with ``record: false`` never enter memory, so no record is one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evals.model.corpus import Conversation

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Encoded", "TurnLookup", "encode_records", "locate_records", "record_turns"]


class TurnLookup:
    """One conversation's turn contents, with a text -> recorded turn indices map built on first need."""

    def __init__(self, conversation: Conversation) -> None:
        self.contents = [turn.content for turn in conversation.turns]
        recorded = [turn.record for turn in conversation.turns]
        # None when every turn is recorded: the common case needs no per-turn check.
        self.recorded: list[bool] | None = None if all(recorded) else recorded
        self._where: dict[str, list[int]] | None = None
        # The first turn not recorded (len(turns) when all are), and how many turns before each index are
        # recorded: together they spot full_history's records when unrecorded questions follow the history.
        self.prefix = recorded.index(False) if False in recorded else len(recorded)
        self._recorded_before = [0]
        for flag in recorded:
            self._recorded_before.append(self._recorded_before[-1] + flag)

    def indices(self, text: str) -> list[int]:
        """The recorded turns whose content is ``text``, ascending."""
        if self._where is None:
            self._where = {}
            for index, content in enumerate(self.contents):
                if self.recorded is None or self.recorded[index]:
                    self._where.setdefault(content, []).append(index)
        return self._where.get(text, [])

    def all_recorded(self, start: int, stop: int) -> bool:
        return self.recorded is None or all(self.recorded[start:stop])

    def recorded_before(self, index: int) -> int:
        """How many turns before ``index`` are recorded."""
        return self._recorded_before[index]


@dataclass(frozen=True)
class Encoded:
    """One test point's records: turn refs (-1 = not a turn), the other records' texts, and
    ``span`` = (start, stop) when the refs are exactly the turns start..stop-1 in order."""

    refs: np.ndarray
    texts: list[str]
    span: tuple[int, int] | None = None

    def turns(self) -> list[int | None]:
        return [None if ref < 0 else ref for ref in self.refs.tolist()]


def _match(records: Sequence[str], turns: TurnLookup, before: int) -> tuple[list[int], list[str]]:
    """General case: refs (-1 = not a turn) and the texts of the non-turn records."""
    refs: list[int] = []
    texts: list[str] = []
    used: set[int] = set()
    for record in records:
        candidates = [i for i in turns.indices(record) if i < before]
        choice = next((i for i in reversed(candidates) if i not in used), candidates[-1] if candidates else -1)
        if choice < 0:
            texts.append(record)
        else:
            used.add(choice)
        refs.append(choice)
    return refs, texts


def locate_records(records: list[str], turns: TurnLookup, before: int) -> tuple[Sequence[int], list[str], tuple[int, int] | None]:
    """:func:`encode_records` in plain Python (no numpy, for a play-through): the refs (a range when
    they are the turns start..stop-1 in order), the other records' texts, and that span."""
    n = len(records)
    contents = turns.contents
    if 0 < n <= before:
        # Fast path: the last n turns in order (a recent-turns buffer; full_history's whole history).
        start = before - n
        if records == contents[start:before] and turns.all_recorded(start, before):
            return range(start, before), [], (start, before)
        # Every recorded turn in order, when they are the first n and only unrecorded ones follow
        # (full_history at a question asked after the history).
        if n == turns.prefix == turns.recorded_before(before) and records == contents[:n]:
            return range(0, n), [], (0, n)
    refs, texts = _match(records, turns, before)
    return refs, texts, None


def encode_records(records: list[str], turns: TurnLookup, before: int) -> Encoded:
    """Map one test point's records to the turns before it (``before`` = the test point's turn index)."""
    import numpy as np  # here, not at the top: python -m evals should not load it for nothing

    refs, texts, span = locate_records(records, turns, before)
    if isinstance(refs, range):
        return Encoded(np.arange(refs.start, refs.stop, dtype=np.int32), texts, span)
    return Encoded(np.asarray(refs, dtype=np.int32), texts, span)


def record_turns(records: list[str], turns: TurnLookup, before: int) -> list[int | None]:
    """Per record, the index of the turn it is, or None when it is no recorded turn."""
    return encode_records(records, turns, before).turns()
