"""Say when two memories are one: runs on a corpus that return the same top-k on nearly every question.

Six vector stores fed the same vectors are one retriever; a board that ranks them as six memories
misleads. Two runs on the same corpus at the same k are "the same ranking" when their first k records
(the turns they name, and the texts of records that are no turn) are equal on at least
:data:`SAME_SHARE` of the test points both hold. Computed here once, from the store; the leaderboard (site
and CLI) and the compare page read it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evals.store import RunSummary, Store

__all__ = ["SAME_SHARE", "SameRanking", "same_rankings", "same_ranking_note", "tie_groups", "near_twins"]

SAME_SHARE = 0.99  # the share of shared test points whose top-k must agree


@dataclass(frozen=True)
class SameRanking:
    """Run ``other`` returned the same top-k as the run it is listed under on ``same`` of ``total`` test points."""

    other: str  # run id
    strategy: str
    config_key: str
    same: int
    total: int

    @property
    def share(self) -> float:
        return self.same / self.total

    @property
    def everywhere(self) -> bool:
        """The same top-k on every test point both hold: one retriever, not two."""
        return self.same == self.total


def same_rankings(store: Store, runs: Sequence[RunSummary]) -> dict[str, list[SameRanking]]:
    """run id -> the other ``runs`` (same corpus, same k) whose top-k agrees with it on at least
    :data:`SAME_SHARE` of the test points both hold; runs with no such twin are absent."""
    groups: dict[tuple[str, int], list[RunSummary]] = defaultdict(list)
    for s in runs:
        groups[(s.corpus_digest, s.k)].append(s)
    by_id = {s.run_id: s for s in runs}
    out: dict[str, list[SameRanking]] = defaultdict(list)
    for (_, k), group in groups.items():
        if len(group) < 2:
            continue
        for (a, b), (same, total) in store.topk_agreement([s.run_id for s in group], k).items():
            if total == 0 or same < SAME_SHARE * total:
                continue
            for this, other in ((a, b), (b, a)):
                twin = by_id[other]
                out[this].append(SameRanking(other, twin.strategy, twin.config_key, same, total))
    for twins in out.values():
        twins.sort(key=lambda t: (t.strategy, t.config_key))
    return dict(out)


def tie_groups(same: dict[str, list[SameRanking]], order: Sequence[str]) -> list[list[str]]:
    """The runs of ``order`` (run ids, in board order) that return the same top-k on every test point, as groups
    of two or more, each in board order: one group per retriever, however many libraries it was run through.
    Equality on every point is transitive, so a group is every run tied to its first member."""
    placed: set[str] = set()
    groups = []
    for run_id in order:
        if run_id in placed:
            continue
        tied = {t.other for t in same.get(run_id, []) if t.everywhere}
        if tied:
            group = [r for r in order if r == run_id or r in tied]
            placed.update(group)
            groups.append(group)
    return groups


def near_twins(twins: Sequence[SameRanking]) -> list[SameRanking]:
    """The twins that agree on at least :data:`SAME_SHARE` of the test points but not on all: those a tie group
    does not already say."""
    return [t for t in twins if not t.everywhere]


def same_ranking_note(twins: Sequence[SameRanking], names: Mapping[str, str] | None = None) -> str:
    """The words a board or compare page shows for near twins: "same ranking as bm25: top-k equal on 1,975 of 1,981",
    each twin by its row's name in ``names`` (run id -> name; its strategy where absent). Twins equal on every point
    are one tie group, said once for the group, not here."""
    near = near_twins(twins)
    if not near:
        return ""
    names = names or {}
    parts = [f"{names.get(t.other, t.strategy)}: top-k equal on {t.same:,} of {t.total:,}" for t in near]
    return "same ranking as " + "; ".join(parts)
