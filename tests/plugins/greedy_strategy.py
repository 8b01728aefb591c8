"""A test-only strategy that returns more records than it is asked for: recency's last ``2k`` turns.

The play-through keeps the first k and counts each such retrieval (RunResult.long_retrievals, stored as the
metric retrievals_over_k); tests/run/test_ray.py checks a Ray run counts them as a local run does. Referenced
as ``greedy_strategy:SPEC`` with tests/plugins on the path.
"""

from __future__ import annotations

from evals.strategies import Recency, spec_from_factory


class Greedy(Recency):
    name = "greedy"

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return super().retrieve(query, 2 * k)


def make() -> Greedy:
    """recency, returning twice the records asked for."""
    return Greedy()


SPEC = spec_from_factory("greedy", make)
