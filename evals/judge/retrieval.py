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
* ``recall_any``: some evidence item is retrieved (trec_eval's ``success``).
  ``recall_all``: every one is. ``recall_frac``: the fraction of evidence
  items retrieved (trec_eval's ``recall`` at the cutoff; LoCoMo's
  ``recall_acc``, though LoCoMo scores a question without evidence 1, and here
  it is left out).
* ``ndcg_any``: trec_eval's ``ndcg_cut`` with binary relevance: DCG = the sum
  of 1/log2(rank + 1) over the relevant ranks, divided by the ideal DCG of
  min(|evidence|, c) relevant items at the top.
* ``ndcg_any_lme``: LongMemEval's ``ndcg`` (``src/retrieval/eval_utils.py``),
  the same but for the discount: rank 1 counts 1 and rank r >= 2 counts
  1/log2(r), so ranks 1 and 2 weigh the same (its DCG adds the first
  relevance undiscounted, then divides the one at zero-based position i by
  log2(i + 1)). Same items, same ideal of min(|evidence|, c). The LongMemEval
  paper's NDCG figures are this one; on the same ranking it differs from
  ``ndcg_any`` by a few hundredths either way.

**Records that hold several turns** (a session, a chunk, a fact citing its
sources: ``Record.turns``) are ranked as records: each rank is one record,
and the items it holds are its turns at turn level and their sessions at
session level. An evidence item is retrieved at the rank of the first record
holding it, so one record may retrieve several; the recalls count evidence
items as before (LoCoMo's recall: the evidence ids found among the retrieved
records' ids; LongMemEval's recall_any / recall_all over the retrieved ids).
At session level a record holding only sessions already seen takes no rank,
as a repeated session takes none above. NDCG credits each evidence item at its
record's rank (graded relevance: a record's gain is the number of evidence
items it is first to hold, LongMemEval's ``dcg`` over graded relevances) over
the same ideal of min(|evidence|, c) items one a rank, and is capped at 1: a
record holding several evidence items can beat an ideal that assumes one item
a rank. A record naming one turn, or none (text only), is an item as above,
so every figure of such records is what it always was (the cap never binds).

Every test point is scored once for every level, cutoff and metric
(:func:`point_values`): the ranks at which its evidence first appears are
found once per level, and each cutoff reads them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import cache, lru_cache

from evals.model.results import PER_CUTOFF, WHOLE_LIST, TestPointResult

__all__ = [
    "LEVELS",
    "POINT_METRICS",
    "budget_value",
    "cutoff_ranking",
    "evidence_at",
    "held_ranks",
    "held_sessions",
    "ndcg_any",
    "ndcg_any_lme",
    "point_scores",
    "point_value",
    "point_values",
    "record_items",
    "relevant_ranks",
    "retrieved_at",
    "sessions_of",
    "turn2session",
]

LEVELS = ("turn", "session")


def sessions_of(turns: Sequence[int], sessions: Sequence[str | None]) -> list[str]:
    """The sessions of ``turns`` (evidence turns), first seen first: a test point's evidence sessions
    when the corpus lists none of its own."""
    return list(dict.fromkeys(s for t in turns if 0 <= t < len(sessions) and (s := sessions[t]) is not None))


def held_sessions(held: list[list[int]] | None, sessions: Sequence[str | None]) -> list[list[str]] | None:
    """Per rank, the sessions of the turns its record holds (first seen first), as the play-through makes them."""
    if held is None:
        return None
    return [list(dict.fromkeys(s for t in group if 0 <= t < len(sessions) and (s := sessions[t]) is not None)) for group in held]


def evidence_at(point: TestPointResult, level: str) -> frozenset[Hashable]:
    return frozenset(point.evidence_turns if level == "turn" else point.evidence_sessions)


def _ranking(point: TestPointResult, cutoff: int, rule: str, level: str) -> list[Hashable | None] | None:
    """The whole ranking cutoff ``cutoff`` reads (before the cut), or None: not recorded."""
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
        return list(turns)
    return list(dict.fromkeys(s for s in sessions if s is not None))


def _held(point: TestPointResult, cutoff: int, rule: str, level: str) -> list[tuple[Hashable, ...]] | None:
    """Per rank, the items the record holds, when some record holds several turns; None: one item a rank
    (:func:`_ranking` reads it)."""
    if point.cutoff_rankings is not None:
        found = (point.cutoff_held or {}).get(cutoff)
        if found is None:
            return None
        turns, sessions = found
    elif rule == PER_CUTOFF or point.ranked_held is None or point.ranked_held_sessions is None:
        return None
    else:
        turns, sessions = point.ranked_held, point.ranked_held_sessions
    if level == "turn":
        return [tuple(group) for group in turns]
    seen: set[str] = set()
    groups = []
    for group in sessions:
        new = tuple(s for s in group if s not in seen)
        if new:  # a record of sessions already seen takes no rank, as a repeated session takes none
            seen.update(new)
            groups.append(new)
    return groups


def held_ranks(evidence: frozenset[Hashable], groups: Iterable[Sequence[Hashable]]) -> list[int]:
    """The 1-based rank of the first record holding each evidence item it holds, in order (a record holding
    several gives its rank once for each)."""
    seen: set[Hashable] = set()
    ranks = []
    for rank, group in enumerate(groups, start=1):
        for item in group:
            if item in evidence and item not in seen:
                seen.add(item)
                ranks.append(rank)
    return ranks


def _ranks(
    point: TestPointResult, cutoff: int, rule: str, level: str, evidence: frozenset[Hashable]
) -> tuple[int, list[int]] | None:
    """(the ranking's length, the ranks holding evidence) of the whole ranking ``cutoff`` reads; None: not recorded."""
    groups = _held(point, cutoff, rule, level)
    if groups is not None:
        return len(groups), held_ranks(evidence, groups)
    ranking = _ranking(point, cutoff, rule, level)
    if ranking is None:
        return None
    return len(ranking), relevant_ranks(evidence, ranking)


def retrieved_at(point: TestPointResult, cutoff: int, rule: str, level: str) -> list[Hashable | None] | None:
    """The items retrieved at ``cutoff`` in rank order (None: a rank holding no turn); None: not recorded."""
    ranking = _ranking(point, cutoff, rule, level)
    if ranking is None:
        return None
    return ranking if rule == WHOLE_LIST else ranking[:cutoff]


def relevant_ranks(evidence: frozenset[Hashable], items: Iterable[Hashable | None]) -> list[int]:
    """The 1-based ranks at which an evidence item appears for the first time, in order."""
    seen: set[Hashable] = set()
    ranks = []
    for rank, item in enumerate(items, start=1):
        if item in evidence and item not in seen:
            seen.add(item)
            ranks.append(rank)
    return ranks


# Each metric scores one test point from the ranks of its relevant items (all within the cutoff), how many
# evidence items it has, and the depth its list is cut at.
Score = Callable[[Sequence[int], int, int], float]


def _recall_any(ranks: Sequence[int], evidence: int, depth: int) -> float:
    return float(bool(ranks))


def _recall_all(ranks: Sequence[int], evidence: int, depth: int) -> float:
    return float(len(ranks) == evidence)


def _recall_frac(ranks: Sequence[int], evidence: int, depth: int) -> float:
    return len(ranks) / evidence


def _trec_gain(rank: int) -> float:
    return 1 / math.log2(rank + 1)


def _lme_gain(rank: int) -> float:
    return 1.0 if rank == 1 else 1 / math.log2(rank)


def _ndcg(gain: Callable[[int], float]) -> Score:
    @cache
    def ideal(relevant: int) -> float:
        """The DCG of ``relevant`` relevant items ranked first (every test point at a cutoff asks again)."""
        return sum(gain(rank) for rank in range(1, relevant + 1))

    def score(ranks: Sequence[int], evidence: int, depth: int) -> float:
        best = ideal(min(evidence, depth))
        # An empty list cut at depth 0 (a whole list with nothing in it) has no ideal; LongMemEval scores it 0.
        # Capped: a record holding several evidence items can beat the ideal of one item a rank.
        return min(1.0, sum(gain(rank) for rank in ranks) / best) if best else 0.0

    return score


# name -> the score of one test point; in the order the tables show them.
POINT_METRICS: dict[str, Score] = {
    "recall_any": _recall_any,
    "recall_all": _recall_all,
    "recall_frac": _recall_frac,
    "ndcg_any": _ndcg(_trec_gain),
    "ndcg_any_lme": _ndcg(_lme_gain),
}


def record_items(point: TestPointResult, level: str, records: int, k: int) -> list[tuple[Hashable, ...]] | None:
    """Per record of the run's first ``records`` (the records it kept: within k, or a whole list), the items it holds
    at ``level`` (turns, or their sessions); None: the ranking was not recorded."""
    if point.ranked_held is not None and point.ranked_held_sessions is not None:
        held = point.ranked_held if level == "turn" else point.ranked_held_sessions
        return [tuple(group) for group in held[:records]]
    if point.cutoff_rankings is not None:
        ranking = point.cutoff_rankings.get(k)
        if ranking is None:
            return None
        turns, sessions = ranking
    elif point.ranked_turns is None or point.ranked_sessions is None:
        return None
    else:
        turns, sessions = point.ranked_turns, point.ranked_sessions
    items = turns if level == "turn" else sessions
    return [() if item is None else (item,) for item in items[:records]]


def cutoff_ranking(point: TestPointResult, depth: int) -> TestPointResult:
    """``point`` with its ranking as the cutoffs read it: down to ``depth`` (the run's deepest cutoff). A ranking kept
    deeper to fill the context budgets (``ranked_tokens``) is read past it by the budget figures alone, so every
    figure at a cutoff (sessions widened as far as the deepest cutoff's records, turn2session's widening) stays
    what it was."""
    if point.ranked_tokens is None or point.ranked_turns is None or len(point.ranked_turns) <= depth:
        return point
    cut = {"ranked_turns": point.ranked_turns[:depth], "ranked_sessions": (point.ranked_sessions or [])[:depth]}
    if point.ranked_held is not None:
        cut |= {"ranked_held": point.ranked_held[:depth], "ranked_held_sessions": (point.ranked_held_sessions or [])[:depth]}
    return point.model_copy(update=cut)


def budget_value(
    point: TestPointResult, record_tokens: Sequence[int], k: int, level: str, budget: int, name: str
) -> float | None:
    """``recall_any`` or ``recall_frac`` of the records that fit in ``budget`` tokens: the memory's ranking in rank
    order while its records' tokens add up to at most ``budget``; the record that would cross it does not count.
    The ranking is the one kept deep enough to fill the largest budget (``point.ranked_tokens``, its records'
    tokens), whatever k; a run that kept none (stored before, or asked once per cutoff) is read within its records
    at k (``record_tokens``), as before. None without evidence at ``level`` or without a recorded ranking."""
    evidence = evidence_at(point, level)
    if not evidence:
        return None
    if point.ranked_tokens is not None and point.cutoff_rankings is None:
        record_tokens = point.ranked_tokens
    reach = _reach(point, record_tokens, k, level, evidence)
    if reach is None:
        return None
    found = sum(1 for spent in reach.values() if spent <= budget)
    return float(found > 0) if name == "recall_any" else found / len(evidence)


# The last (point, tokens, k, level) _reach worked out, and its answer: a test point's budget figures (every
# budget, recall_any and recall_frac) are asked one after the other, and each reads the same walk down its ranking.
_last_reach: tuple[object, object, int, str, dict[Hashable, int] | None] | None = None


def _reach(
    point: TestPointResult, record_tokens: Sequence[int], k: int, level: str, evidence: frozenset[Hashable]
) -> dict[Hashable, int] | None:
    """Each evidence item the ranking holds -> the tokens of context up to and including the first record holding
    it (the records' tokens only grow down the ranking, so it is within a budget exactly when that sum is); None:
    the ranking was not recorded."""
    global _last_reach
    last = _last_reach
    if last is not None and last[0] is point and last[1] is record_tokens and last[2] == k and last[3] == level:
        return last[4]
    groups = record_items(point, level, len(record_tokens), k)
    reach: dict[Hashable, int] | None = None
    if groups is not None:
        reach = {}
        spent = 0
        for group, tokens in zip(groups, record_tokens, strict=False):
            spent += tokens
            for item in group:
                if item in evidence and item not in reach:
                    reach[item] = spent
            if len(reach) == len(evidence):
                break  # every item found: deeper records change no budget's figure
    _last_reach = (point, record_tokens, k, level, reach)
    return reach


def ndcg_any(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    """trec_eval's ndcg_cut of ``items`` cut at ``cutoff``, binary relevance."""
    return POINT_METRICS["ndcg_any"](relevant_ranks(evidence, items[:cutoff]), len(evidence), cutoff)


def ndcg_any_lme(evidence: frozenset[Hashable], items: Sequence[Hashable | None], cutoff: int) -> float:
    """LongMemEval's ndcg of ``items`` cut at ``cutoff``, binary relevance."""
    return POINT_METRICS["ndcg_any_lme"](relevant_ranks(evidence, items[:cutoff]), len(evidence), cutoff)


@lru_cache(maxsize=1 << 16)
def _scores(within: tuple[int, ...], evidence: int, depth: int) -> tuple[float, ...]:
    """Every metric of :data:`POINT_METRICS`, in order, of relevant ranks ``within`` the cut. Most test points
    share a handful of patterns (nothing found; found at rank 1...), so each is worked out once."""
    return tuple(score(within, evidence, depth) for score in POINT_METRICS.values())


def point_scores(
    point: TestPointResult, cutoffs: Sequence[int], rule: str, levels: Sequence[str] = LEVELS
) -> dict[tuple[str, int], tuple[float, ...]]:
    """(level, cutoff) -> the test point's score under each metric of :data:`POINT_METRICS`, in that order, for
    every level (of ``levels``) and cutoff it has values at (none at a level without evidence, none at a cutoff whose
    ranking was not recorded). The ranks holding evidence are found once per level, and every cutoff reads them."""
    values: dict[tuple[str, int], tuple[float, ...]] = {}
    for level in levels:
        evidence = evidence_at(point, level)
        if not evidence:
            continue
        shared = None if point.cutoff_rankings is not None else _ranks(point, 0, rule, level, evidence)
        for cutoff in cutoffs:
            found = shared if shared is not None else _ranks(point, cutoff, rule, level, evidence)
            if found is None:
                continue
            length, ranks = found
            # A whole list (full_history) is compared with an ideal of the same depth: nothing it holds is cut off.
            depth = length if rule == WHOLE_LIST else cutoff
            values[level, cutoff] = _scores(tuple(r for r in ranks if r <= depth), len(evidence), depth)
    return values


def point_values(point: TestPointResult, cutoffs: Sequence[int], rule: str) -> dict[tuple[str, str, int], float]:
    """:func:`point_scores` keyed by (name, level, cutoff)."""
    return {
        (name, level, cutoff): value
        for (level, cutoff), scores in point_scores(point, cutoffs, rule).items()
        for name, value in zip(POINT_METRICS, scores, strict=True)
    }


def point_value(point: TestPointResult, name: str, level: str, cutoff: int, rule: str) -> float | None:
    """One test point's ``name`` at ``level`` and ``cutoff``; None when it has no evidence there or no ranking."""
    return point_values(point, (cutoff,), rule).get((name, level, cutoff))


def turn2session(point: TestPointResult, k: int, depth: int | None = None) -> tuple[float, float, float] | None:
    """LongMemEval's ``evaluate_retrieval_turn2session`` (src/retrieval/eval_utils.py, as run_retrieval.py calls it
    at turn granularity) of ``point``'s whole ranking at ``k``: (recall_any, recall_all, ndcg_any). None without
    evidence turns, without a session for them (a corpus without sessions has no such figure: recall_all would be 1
    over an empty set beside recall_any 0), without a recorded ranking, and where the ranking was recorded down to
    ``depth`` records only (the deepest cutoff the strategy was asked at; None: the whole ranking) and the widening
    below runs past them: LongMemEval's figure would read records that were never kept.

    Its turn ids name their session, an evidence turn's as ``answer_…`` and every other turn of an evidence session
    as ``noans_…``, and it cuts them to their session: so an evidence session counts only by its evidence turns, and
    its other turns are a separate, irrelevant "session". The list is widened until ``k`` distinct such sessions are
    covered (``effective_k``); recall is over those sessions, but NDCG (``ndcg``, its discount) counts every ranked
    evidence turn, against an ideal of every evidence turn, so it is not the distinct-session NDCG of
    ``session.ndcg_any``."""
    if depth is not None:
        point = cutoff_ranking(point, depth)
    turns, sessions = point.ranked_turns, point.ranked_sessions
    if not point.evidence_turns or not point.evidence_sessions or turns is None or sessions is None:
        return None
    evidence, answer_sessions = set(point.evidence_turns), set(point.evidence_sessions)
    keys: list[Hashable] = []
    for rank, (turn, session) in enumerate(zip(turns, sessions, strict=False)):
        if turn is None or session is None:
            keys.append(("record", rank))  # a record that is no turn: its own id, never relevant
        elif turn in evidence:
            keys.append(("answer", session))
        else:
            keys.append(("noans" if session in answer_sessions else "session", session))
    correct = {("answer", s) for s in answer_sessions}
    effective = k
    while effective <= len(keys) and len(set(keys[:effective])) < k:
        effective += 1
    if depth is not None and len(keys) >= depth and effective > len(keys):
        return None  # widened past the records kept: the strategy may hold more, which LongMemEval's ranking reads
    recalled = set(keys[:effective])
    relevant = [rank for rank, key in enumerate(keys[:effective], start=1) if key in correct]
    ideal = sum(_lme_gain(rank) for rank in range(1, min(len(evidence), effective) + 1))
    ndcg = sum(_lme_gain(rank) for rank in relevant) / ideal if ideal else 0.0
    return float(bool(recalled & correct)), float(correct <= recalled), ndcg
