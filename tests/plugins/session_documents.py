"""A test-only strategy whose records are whole sessions: each record holds every turn of one session
(``Record(text, turns=...)``), its text the session's turns joined, newest session first.

Like MemPalace's raw session documents: evidence it holds is credited by the turns each record names
(tests/judge/test_held_turns.py). Referenced as ``session_documents:SPEC`` with tests/plugins on the path;
``session_documents:PER_CUTOFF`` is a variant asked once per cutoff (tests/views/test_board_files.py).
"""

from __future__ import annotations

import dataclasses

from evals.strategies import Record, spec_from_factory


class SessionDocuments:
    name = "session_documents"

    def __init__(self, *, name_turns: bool = True) -> None:
        self.name_turns = name_turns
        self.sessions: dict[str, list[tuple[int, str]]] = {}

    def add(self, role: str, content: str, *, turn: int, session: str | None = None) -> None:
        self.sessions.setdefault(session or f"turn {turn}", []).append((turn, content))

    def retrieve(self, query: str, k: int) -> list[Record]:
        newest = list(self.sessions.values())[::-1][:k]
        return [
            Record("\n".join(text for _, text in turns), turns=tuple(t for t, _ in turns) if self.name_turns else ())
            for turns in newest
        ]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": record.text} for record in self.retrieve(query, k)]

    # Footprint: what it holds is one document per session, not the turns.
    def held_count(self) -> int:
        return len(self.sessions)

    def held_texts(self) -> list[str]:
        return ["\n".join(text for _, text in turns) for turns in self.sessions.values()]

    def reset(self) -> None:
        self.sessions.clear()


def make(name_turns: bool = True) -> SessionDocuments:
    """Whole sessions as records, newest first; ``name_turns=False`` names none (text only)."""
    return SessionDocuments(name_turns=name_turns)


SPEC = spec_from_factory("session_documents", make)


class PerCutoffSessions(SessionDocuments):
    """Whole sessions as records, newest first when asked for fewer than 10, oldest first otherwise: its ranking
    depends on k, so it is asked once per cutoff (``prefix_stable=False``), as mempalace's drawers are."""

    name = "per_cutoff_sessions"

    def retrieve(self, query: str, k: int) -> list[Record]:
        ordered = list(self.sessions.values())
        ordered = ordered[::-1] if k < 10 else ordered
        return [Record("\n".join(text for _, text in turns), turns=tuple(t for t, _ in turns)) for turns in ordered[:k]]


def make_per_cutoff() -> PerCutoffSessions:
    return PerCutoffSessions()


PER_CUTOFF = dataclasses.replace(spec_from_factory("per_cutoff_sessions", make_per_cutoff), prefix_stable=False)
