"""The field's retrieval metrics of one test point, at a cutoff, at turn or session level.

Definitions (the methodology page states them too):

* The **evidence** of a test point is its ``evidence_turns`` at turn level,
  and its ``evidence_sessions`` (the corpus's own list, else the sessions of
  its evidence turns) at session level. A test point without evidence at a
  level is left out of that level's numbers, and counted apart.
* The **retrieved items at cutoff c**: at turn level, the turns of the first
  ``c`` records in rank order (a record that is not a turn holds a rank and is
  never relevant; a turn listed again is relevant only the first time). At
  session level, the records' sessions in rank order, first occurrence kept,
  then the first ``c`` of those: like LongMemEval, the turn list is widened
  until ``c`` distinct sessions are covered, here as far as the deepest
  cutoff's records reach. A strategy that ignores k (full_history) hands over
  its whole list at every cutoff, and every item of it counts.
* ``recall_any``: some evidence item is retrieved. ``recall_all``: every one
  is. ``recall_frac``: the fraction of evidence items retrieved (LoCoMo's
  ``recall_acc``; LoCoMo scores a question without evidence 1, here it is left
  out). ``ndcg_any``: binary relevance, DCG = sum of 1/log2(rank + 1) over the
  relevant ranks, divided by the ideal DCG of min(|evidence|, c) relevant items
  at the top (LongMemEval's ``ndcg``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

from evals.results import PER_CUTOFF, WHOLE_LIST, TestPointResult

__all__ = ["LEVELS", "POINT_METRICS", "evidence_at", "point_value", "retrieved_at", "sessions_of"]

LEVELS = ("turn", "session")


def sessions_of(turns: Sequence[int], sessions: Sequence[str | None]) -> list[str]:
    """The sessions of ``turns`` (evidence turns), first seen first: a test point's evidence sessions
    when the corpus lists none of its own."""
    return list(dict.fromkeys(s for t in turns if 0 <= t < len(sessions) and (s := sessions[t]) is not None))


def evidence_at(point: TestPointResult, level: str) -> frozenset[Hashable]:
    return frozenset(point.evidence_turns if level == "turn" else point.evidence_sessions)


def retrieved_at(point: TestPointResult, cutoff: int, rule: str, level: str) -> list[Hashable | None] | None:
    """The items retrieved at ``cutoff`` in rank order (None: a rank holding no turn); None: not recorded."""
    if point.cutoff_rankings is not None:
        ranking = point.cutoff_rankings.get(cutoff)
        if ranking is None:
            return None
        turns, sessions = ranking
    elif rule == PER_CUTOFF or point.ranked_turns is None or point.ranked_sessions is None:
        return None  # each cutoff's own ranking was not kept (a stored run): its metrics stand as measured
    else:
        turns, sessions = point.ranked_turns, point.ranked_sessions
    if level == "turn":
        return list(turns) if rule == WHOLE_LIST else list(turns[:cutoff])
    distinct = list(dict.fromkeys(s for s in sessions if s is not None))
    return distinct if rule == WHOLE_LIST else distinct[:cutoff]


def _found(evidence: frozenset[Hashable], items: Sequence[Hashable | None]) -> set[Hashable]:
    return evidence.intersection(items)


def recall_any(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    return float(bool(_found(evidence, items)))


def recall_all(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    return float(len(_found(evidence, items)) == len(evidence))


def recall_frac(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    return len(_found(evidence, items)) / len(evidence)


def ndcg_any(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    seen: set[Hashable] = set()
    dcg = 0.0
    for rank, item in enumerate(items, start=1):
        if item in evidence and item not in seen:
            seen.add(item)
            dcg += 1 / math.log2(rank + 1)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(evidence), cutoff) + 1))
    return dcg / ideal


# name -> the score of one test point, from its evidence, the items retrieved and the cutoff.
POINT_METRICS: dict[str, Callable[[frozenset[Hashable], Sequence[Hashable | None], int], float]] = {
    "recall_any": recall_any,
    "recall_all": recall_all,
    "recall_frac": recall_frac,
    "ndcg_any": ndcg_any,
}


def point_value(point: TestPointResult, name: str, level: str, cutoff: int, rule: str) -> float | None:
    """One test point's ``name`` at ``level`` and ``cutoff``; None when it has no evidence there or no ranking."""
    evidence = evidence_at(point, level)
    if not evidence:
        return None
    items = retrieved_at(point, cutoff, rule, level)
    if items is None:
        return None
    # A whole list (full_history) is compared with an ideal of the same depth: nothing it holds is cut off.
    depth = len(items) if rule == WHOLE_LIST else cutoff
    return POINT_METRICS[name](evidence, items, depth)
