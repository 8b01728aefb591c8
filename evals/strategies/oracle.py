"""``oracle``: exactly the labelled evidence turns. The reader's ceiling, not a memory.

It keeps every turn it is given, but retrieves only what the corpus labels as
the answer's evidence: it is told each test point's labels just before the
retrieval (``read_labels``, the hook :class:`evals.strategies.base.ReadsLabels`
describes, which only a spec declaring ``reads_labels`` is given). So its
retrieval figure is what perfect retrieval scores, and its answers (with
``--with-answers``) are what the answer model makes of exactly the evidence:
the ceiling a reader reaches, as LongMemEval's ``longmemeval_oracle.json`` is
for that benchmark, on any corpus with evidence.

What it returns, as ``Record(text, turn=i)`` in conversation order (the order a
reader would meet them), cut to k:

* the test point's evidence turns, where it names any;
* else, where it names only evidence sessions, every turn held from those sessions;
* else nothing: without labels there is nothing to be an oracle of.

A turn it was never given (a ``record: false`` turn, or one after the question)
cannot be returned, so it never sees the future. The first k of the list are
the list at k (``prefix_stable``); ``context_for`` gives the same turns as chat
messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evals.strategies.base import Message, Record
from evals.strategies.registry import StrategySpec

__all__ = ["Oracle", "SPEC"]


class Oracle:
    name = "oracle"

    def __init__(self) -> None:
        self._turns: dict[int, tuple[Message, str | None]] = {}  # turn index -> (message, session)
        self._wanted: list[int] = []  # the turns the current test point's labels name, in conversation order

    def add(self, role: str, content: str, *, turn: int, session: str | None = None) -> None:
        self._turns[turn] = ({"role": role, "content": content}, session)

    def read_labels(self, evidence_turns: Sequence[int], evidence_sessions: Sequence[str]) -> None:
        if evidence_turns:
            self._wanted = sorted(t for t in set(evidence_turns) if t in self._turns)
        elif evidence_sessions:
            sessions = set(evidence_sessions)
            self._wanted = sorted(t for t, (_, session) in self._turns.items() if session in sessions)
        else:
            self._wanted = []

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        return [Record(self._turns[t][0]["content"], turn=t) for t in self._wanted[:k]]

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return [dict(self._turns[t][0]) for t in self._wanted[:k]]

    def reset(self) -> None:
        self._turns.clear()
        self._wanted = []

    def held_count(self) -> int:
        return len(self._turns)

    def held_texts(self) -> Iterable[str]:
        return (message["content"] for message, _ in self._turns.values())


SPEC = StrategySpec(
    name="oracle",
    build=lambda options, context: Oracle(),
    reads_labels=True,
    summary="Exactly the labelled evidence turns, in conversation order, cut to k: the reader's ceiling (reads the labels).",
)
