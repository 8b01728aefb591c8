"""Where each turn of a corpus is shown: on its conversation's transcript, or on a passage page shared with other conversations.

LongMemEval-style corpora build every conversation from a shared pool of
sessions, so most of the text recurs across conversations; rendered once per
conversation, the transcripts alone would be larger than GitHub Pages allows.
So a corpus's turns are cut into the longest runs that always occur together
(a turn's run continues while the turn has one and the same successor
everywhere, and that successor one and the same predecessor: de Bruijn graph
"unitigs"), computed from per-turn keys (a hash of role and text, and the
length: :mod:`evals.site._corpus`). A run that
occurs more than once and holds at least :data:`PASSAGE_MIN_CHARS` characters is
a *passage*: its turns are shown once, on the passage's page, and each
conversation's transcript shows it as one linked line. Everything else is
shown on the conversation's own transcript page. The layout depends on the
corpus alone, so every run's drill-downs link to the same places.
"""

from __future__ import annotations

import bisect
import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from evals.views.site_paths import Paths, passage

__all__ = ["PASSAGE_MIN_CHARS", "ConversationLayout", "CorpusLayout", "Passage", "TurnSpan", "corpus_layout"]

PASSAGE_MIN_CHARS = 2_000  # a recurring run shorter than this is shown inline: a page of its own would not pay

_UNSET, _MANY, _EDGE = -2, -3, -1  # a turn's successor/predecessor: none seen yet, several, the conversation's edge


@dataclass(frozen=True)
class TurnSpan:
    """Turns ``start`` to ``end`` (exclusive) of a conversation: a passage's occurrence, or turns
    shown inline (``passage`` None)."""

    start: int
    end: int
    passage: str | None


@dataclass
class ConversationLayout:
    conversation_id: str
    turns: int
    spans: list[TurnSpan]
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._starts = [s.start for s in self.spans]

    def span_of(self, turn: int) -> TurnSpan | None:
        if not self.spans:
            return None
        return self.spans[max(0, bisect.bisect_right(self._starts, turn) - 1)]


@dataclass
class Passage:
    passage_id: str
    turns: int
    uses: list[tuple[str, int]]  # (conversation id, first turn) of every occurrence, in corpus order


@dataclass
class CorpusLayout:
    """Every conversation's spans and every passage of one corpus (by content digest)."""

    digest: str
    conversations: dict[str, ConversationLayout]  # in corpus order
    passages: dict[str, Passage]

    def turn_href(self, paths: Paths, conversation_id: str, turn: int) -> str:
        """Where the whole text of a turn is shown (site-root relative)."""
        span = self.conversations[conversation_id].span_of(turn)
        if span is None or span.passage is None:
            return f"{paths.transcript(self.digest, conversation_id)}#t-{turn}"
        return f"{passage(self.digest, span.passage)}#p-{turn - span.start}"

    def context_href(self, paths: Paths, conversation_id: str, turn: int) -> str:
        """A turn in its conversation's transcript (a passage's turn: the passage's line there)."""
        span = self.conversations[conversation_id].span_of(turn)
        anchor = turn if span is None or span.passage is None else span.start
        return f"{paths.transcript(self.digest, conversation_id)}#t-{anchor}"

    def first_use(self, conversation_id: str) -> list[TurnSpan]:
        """The passages whose first occurrence in the corpus is in this conversation (their pages are made with it)."""
        return [
            s
            for s in self.conversations[conversation_id].spans
            if s.passage is not None and self.passages[s.passage].uses[0] == (conversation_id, s.start)
        ]


def corpus_layout(digest: str, conversations: list[tuple[str, Iterable[tuple[int, int]]]]) -> CorpusLayout:
    """The layout of a corpus from each conversation's per-turn ``(key, characters)``, keys below 2**64
    (each conversation's walked once, so they may come as they are made)."""
    ids: dict[tuple[int, int], int] = {}
    sequences = [[ids.setdefault(key, len(ids)) for key in turns] for _, turns in conversations]
    chars = [0] * len(ids)
    for key, index in ids.items():
        chars[index] = key[1]
    succ, pred, count = [_UNSET] * len(ids), [_UNSET] * len(ids), [0] * len(ids)
    for seq in sequences:
        last = len(seq) - 1
        for i, x in enumerate(seq):
            count[x] += 1
            after = seq[i + 1] if i < last else _EDGE
            if succ[x] != after:
                succ[x] = after if succ[x] == _UNSET else _MANY
            before = seq[i - 1] if i else _EDGE
            if pred[x] != before:
                pred[x] = before if pred[x] == _UNSET else _MANY
    keys = list(ids)
    names: dict[int, str | None] = {}  # a run's first turn -> its passage id, or None when it is not a passage

    def name(seq: list[int], start: int, end: int) -> str | None:
        first = seq[start]
        if first not in names:
            run = seq[start:end]
            if count[first] < 2 or sum(chars[x] for x in run) < PASSAGE_MIN_CHARS:
                names[first] = None
            else:
                packed = b"".join(struct.pack("<QQ", *keys[x]) for x in run)
                names[first] = hashlib.blake2b(packed, digest_size=8).hexdigest()
        return names[first]

    layouts: dict[str, ConversationLayout] = {}
    passages: dict[str, Passage] = {}
    for (cid, _), seq in zip(conversations, sequences, strict=True):
        spans: list[TurnSpan] = []
        start = 0
        for i in range(len(seq)):
            if i + 1 < len(seq) and succ[seq[i]] != _MANY and pred[seq[i + 1]] != _MANY:
                continue  # the run goes on
            found = name(seq, start, i + 1)
            if found is not None:
                spans.append(TurnSpan(start, i + 1, found))
                passages.setdefault(found, Passage(found, i + 1 - start, [])).uses.append((cid, start))
            elif spans and spans[-1].passage is None:
                spans[-1] = TurnSpan(spans[-1].start, i + 1, None)
            else:
                spans.append(TurnSpan(start, i + 1, None))
            start = i + 1
        layouts[cid] = ConversationLayout(cid, len(seq), spans)
    return CorpusLayout(digest, layouts, passages)
