"""A test-only strategy that is slow on purpose: full_history, except that each retrieve first
touches ``marker`` (so a test knows the run is under way) and then sleeps ``seconds``.

tests/run/test_hostile_run.py interrupts runs of it (Ctrl-C) on both executors. Referenced as
``sleepy_strategy:SPEC`` with tests/plugins on the path.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from evals.strategies import FullHistory, spec_from_factory


class Sleepy(FullHistory):
    name = "sleepy"

    def __init__(self, *, seconds: float, marker: str) -> None:
        super().__init__()
        self._seconds, self._marker = seconds, marker

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        if self._marker:
            Path(self._marker).touch()
        time.sleep(self._seconds)
        return super().retrieve(query, k)


def make(seconds: float = 1.0, marker: str = "") -> Sleepy:
    """full_history that touches ``marker`` and sleeps ``seconds`` before each retrieve."""
    return Sleepy(seconds=seconds, marker=marker)


# Like full_history, it returns every earlier turn whatever k is.
SPEC = replace(spec_from_factory("sleepy", make), ignores_k=True)
