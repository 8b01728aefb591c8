"""A plug-in strategy for bench_gate_noise.py: recency whose retrieve does a fixed amount of CPU work first, and
optionally sleeps, so its latency is milliseconds (well above the gate's floor) and a slowdown can be injected.

Referenced as ``_gate_plugin:SPEC`` with bench/ on the path. ``spins`` is the work (iterations of a small
arithmetic loop: the same work whatever the machine's load, which only makes it wait longer for a core);
``sleep_ms`` the injected slowdown (time away from the processor, as a strategy waiting on I/O spends it).
"""

from __future__ import annotations

import time

from evals.strategies import Recency, spec_from_factory


class Spinning(Recency):
    name = "spinning"

    def __init__(self, *, spins: int, sleep_ms: float) -> None:
        super().__init__()
        self._spins, self._sleep_s = spins, sleep_ms / 1000

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        total = 0
        for i in range(self._spins):
            total += i * i % 7
        if self._sleep_s:
            time.sleep(self._sleep_s)
        return super().retrieve(query, k)


def make(spins: int = 60_000, sleep_ms: float = 0.0) -> Spinning:
    """recency after ``spins`` iterations of CPU work and a sleep of ``sleep_ms`` milliseconds per retrieve."""
    return Spinning(spins=spins, sleep_ms=sleep_ms)


SPEC = spec_from_factory("spinning", make)
