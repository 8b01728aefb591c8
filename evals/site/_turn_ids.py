"""Turns named as their benchmark names them: LoCoMo's ``D3:5`` (session 3, its fifth turn), LongMemEval's
session id and the turn's place in it, else the harness's turn number; and each turn's session date.

The importers keep each turn's session key and date verbatim (:mod:`evals.benchmarks.importers`), so the name
is read off them: a session keyed ``session_N`` is LoCoMo's (its dia_ids are ``D<N>:<i>``, i counted from 1
within the session); any other key is a session id, and the turn is its i-th.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["TurnIds"]

_LOCOMO_SESSION = re.compile(r"session_(\d+)")


class TurnIds:
    """One conversation's turn names and dates, from each turn's session key and date (None where it has none)."""

    def __init__(self, sessions: Sequence[str | None] | None, dates: Sequence[str | None] | None = None) -> None:
        self.sessions = list(sessions or [])
        self.dates = list(dates or [])
        self._place: list[int] = []  # each turn's position in its session, from 1
        previous, place = None, 0
        for session in self.sessions:
            place = place + 1 if session is not None and session == previous else 1
            previous = session
            self._place.append(place)

    def label(self, turn: int) -> str:
        """The benchmark's own name of ``turn`` (``D3:5``, ``<session id> #2``), or ``turn N`` without sessions."""
        session = self.sessions[turn] if 0 <= turn < len(self.sessions) else None
        if session is None:
            return f"turn {turn}"
        found = _LOCOMO_SESSION.fullmatch(session)
        if found:
            return f"D{found.group(1)}:{self._place[turn]}"
        return f"{session} #{self._place[turn]}"

    def date(self, turn: int) -> str:
        """The date of ``turn``'s session as the benchmark writes it ("" when it gives none)."""
        value = self.dates[turn] if 0 <= turn < len(self.dates) else None
        return value or ""
