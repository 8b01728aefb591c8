"""What a build computes of each run, once: its verdicts, kept by run id for every page that shows them.

A run's verdicts (:func:`evals.judge.headline.run_verdicts`) decide its run page's misses, its drill-downs'
HIT / MISS, its compare data, every pair page and compare section it is on, and the label audit's
page. Scored again by each of them, they were a third of a build's CPU (``run_verdicts`` ran 100
times for 10 runs). A :class:`Computed` is made per build (and per worker process) and handed to the
pages through :class:`evals.site._publisher.Site`, never kept at module level, so nothing leaks from
one build (or test) to the next.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evals.judge.headline import Verdict, run_verdicts
from evals.judge.metrics import ScoredRun
from evals.store import StoredRun

__all__ = ["Computed"]


@dataclass
class Computed:
    """One build's verdicts by (run id, per-point metric), each per conversation in corpus order.

    ``made`` counts how often each was computed here (rather than found), which a build keeps at one."""

    kept: dict[tuple[str, str], list[list[Verdict]]] = field(default_factory=dict)
    made: Counter[tuple[str, str]] = field(default_factory=Counter)

    def verdicts(self, stored: StoredRun, metric: str) -> list[list[Verdict]]:
        """The run's verdicts under ``metric``: kept from an earlier call (or :meth:`keep`), else computed now."""
        key = (stored.summary.run_id, metric)
        found = self.kept.get(key)
        if found is None:
            found = self.kept[key] = run_verdicts(ScoredRun(stored.run, stored.scores), metric)
            self.made[key] += 1
        return found

    def known(self, run_id: str, metric: str) -> list[list[Verdict]] | None:
        """The run's verdicts under ``metric`` if this build has them already."""
        return self.kept.get((run_id, metric))

    def keep(self, run_id: str, metric: str, verdicts: list[list[Verdict]]) -> None:
        """Verdicts a page computed on its way (the run page does, from the values it shows)."""
        key = (run_id, metric)
        if key not in self.kept:
            self.kept[key] = verdicts
            self.made[key] += 1
