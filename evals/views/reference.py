"""Relative token cost: a run's tokens per test point as a share of the reference run's.

The reference is the latest run of :data:`evals.strategies.REFERENCE_STRATEGY`
on the same corpus. The leaderboard site and the Markdown table both use these
two functions, so they always agree on what a relative cost is relative to.
"""

from __future__ import annotations

from collections.abc import Iterable

from evals.store import RunSummary
from evals.strategies import REFERENCE_STRATEGY

__all__ = ["REFERENCE_STRATEGY", "reference_run", "relative_tokens"]


def reference_run(runs: Iterable[RunSummary], strategy: str = REFERENCE_STRATEGY) -> RunSummary | None:
    """The newest run of ``strategy`` among ``runs`` (one corpus's) that spent any tokens; None without one."""
    candidates = [s for s in runs if s.strategy == strategy and s.tokens_per_test_point]
    return max(candidates, key=lambda s: (s.timestamp, s.run_id)) if candidates else None


def relative_tokens(run: RunSummary, reference: RunSummary | None) -> float | None:
    """``run``'s tokens per test point over the reference's; None without a reference, or where the two
    counted tokens differently (the tokenizer and the ~4-characters estimate do not compare)."""
    if reference is None or run.tokens_per_test_point is None or run.tokenizer != reference.tokenizer:
        return None
    return run.tokens_per_test_point / reference.tokens_per_test_point
