"""Turns named as their benchmark names them, decided in this one place for the drill-downs, the compare pages,
the transcripts and the terminal: each unit may declare its naming (:attr:`evals.benchmarks.Unit.turn_name`),
else the harness names a turn from its session key.

A unit's ``turn_name(turn, session, place)`` gets the turn's index in the conversation, its session key as
the importer kept it (None without one) and its place in that session counted from 1, and returns the
benchmark's own id: LoCoMo's ``D3:5`` (its dia_id), LongMemEval's ``<session id> #2``, BEAM's message id
with its batch (``message 56 · batch 1``). Without a unit's naming (a corpus declaring no benchmark), a
session keyed ``session_N`` is named as LoCoMo names it, any other key as a session id and the place in it,
and a turn without a session ``turn N``. Each turn's date is its session's (or message's) date, verbatim.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

__all__ = ["TurnIds", "harness_name"]

_NUMBERED_SESSION = re.compile(r"session_(\d+)")


def harness_name(turn: int, session: str | None, place: int) -> str:
    """The name of a turn of a corpus whose benchmark declares none: from its session key alone."""
    if session is None:
        return f"turn {turn}"
    found = _NUMBERED_SESSION.fullmatch(session)
    if found:
        return f"D{found.group(1)}:{place}"
    return f"{session} #{place}"


class TurnIds:
    """One conversation's turn names and dates, from each turn's session key and date (None where it has none),
    named as ``benchmark`` (the corpus's declared unit) names them."""

    def __init__(
        self,
        sessions: Sequence[str | None] | None,
        dates: Sequence[str | None] | None = None,
        benchmark: str | None = None,
    ) -> None:
        self.sessions = list(sessions or [])
        self.dates = list(dates or [])
        self._benchmark = benchmark or ""
        self._name = _naming(benchmark)
        self._place: list[int] = []  # each turn's position in its session, from 1
        previous, place = None, 0
        for session in self.sessions:
            place = place + 1 if session is not None and session == previous else 1
            previous = session
            self._place.append(place)

    def label(self, turn: int) -> str:
        """The benchmark's own name of ``turn`` (``D3:5``, ``<session id> #2``, ``message 56 · batch 1``), else ``turn N``."""
        if not 0 <= turn < len(self.sessions):
            return f"turn {turn}"
        session, place = self.sessions[turn], self._place[turn]
        if self._name is harness_name:
            return harness_name(turn, session, place)
        try:
            named = self._name(turn, session, place)
        except Exception as exc:  # noqa: BLE001 - a unit's naming is its own code: the harness names the turn instead
            _said_once(self._benchmark, f"raises {type(exc).__name__}")
            return harness_name(turn, session, place)
        if not isinstance(named, str):
            _said_once(self._benchmark, f"returns {type(named).__name__}, not a string")
            return harness_name(turn, session, place)
        return named

    def date(self, turn: int) -> str:
        """The date of ``turn``'s session as the benchmark writes it ("" when it gives none)."""
        value = self.dates[turn] if 0 <= turn < len(self.dates) else None
        return value or ""


_warned: set[str] = set()


def _said_once(benchmark: str, what: str) -> None:
    """One warning line per benchmark and process: its unit's turn naming failed, so the harness's names its turns."""
    if benchmark not in _warned:
        _warned.add(benchmark)
        from evals.model.formatting import printable

        sys.stderr.write(
            f"warning: benchmark {printable(benchmark)}: its turn_name {what}; its turns are named as the harness names them\n"
        )


def _naming(benchmark: str | None):
    """The declared unit's turn naming, else the harness's (a unit that fails to load names nothing)."""
    if benchmark is not None:
        from evals.benchmarks._registry import units

        try:
            found = units().get(benchmark)
        except Exception:  # noqa: BLE001 - a broken plug-in must not stop a page naming turns
            found = None
        if found is not None and found.turn_name is not None:
            return found.turn_name
    return harness_name
