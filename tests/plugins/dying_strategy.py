"""A test-only strategy whose process dies: full_history, except that adding a turn of one chosen
conversation ends the process (``os._exit``), on its first attempt only or on every attempt.

Played on a Ray worker, it kills that worker, which is what tests/run/test_ray.py needs. Never play
it in the test process itself. Referenced as ``dying_strategy:SPEC`` with tests/plugins on the path.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from evals.strategies import FullHistory, spec_from_factory


class Dying(FullHistory):
    name = "dying"

    def __init__(self, *, marker: str, victim: str, always: bool) -> None:
        super().__init__()
        self._marker, self._victim, self._always = Path(marker), victim, always
        self._conversation = ""

    def begin_conversation(self, conversation_id: str) -> None:
        self._conversation = conversation_id

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        if self._conversation == self._victim and (self._always or not self._marker.exists()):
            self._marker.touch()
            os._exit(1)
        super().add(role, content, turn=turn)


def make(marker: str = "", victim: str = "", always: bool = False) -> Dying:
    """full_history whose worker dies while playing conversation ``victim`` (once, or ``always``)."""
    return Dying(marker=marker, victim=victim, always=always)


# Like full_history, it returns every earlier turn whatever k is.
SPEC = replace(spec_from_factory("dying", make), ignores_k=True)
