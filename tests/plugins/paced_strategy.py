"""A test-only strategy whose retrieve takes a set time: recency, except that each retrieve first does a fixed
amount of work (``work`` rounds of hashing) and then sleeps ``$PACED_STRATEGY_SLEEP_S`` seconds (default none).

The sleep is read from the environment, not from an option, so a run with it has the same configuration as one
without: a slower head at the same configuration, as a code change makes one. tests/analysis/test_gate_load.py
times it. Referenced as ``paced_strategy:SPEC`` with tests/plugins on the path.
"""

from __future__ import annotations

import hashlib
import os
import time

from evals.strategies import Recency, spec_from_factory

SLEEP_ENV = "PACED_STRATEGY_SLEEP_S"


class Paced(Recency):
    name = "paced"

    def __init__(self, *, work: int) -> None:
        super().__init__()
        self._work = work

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        digest = query.encode()
        for _ in range(self._work):
            digest = hashlib.sha256(digest).digest()
        time.sleep(float(os.environ.get(SLEEP_ENV) or 0))
        return super().retrieve(query, k)


def make(work: int = 2000) -> Paced:
    """recency whose retrieve hashes ``work`` times, then sleeps $PACED_STRATEGY_SLEEP_S seconds."""
    return Paced(work=work)


SPEC = spec_from_factory("paced", make)
