"""Pure functions from a run to numbers: recall@k, token cost, intervals.

Definitions (the original harness's, kept exactly):

* A test point is a **hit** when any expected keyword, lower-cased, is a
  substring of the retrieved records joined with ``"\\n"`` and lower-cased;
  with no keywords, when the lower-cased expected fact is a substring of any
  one lower-cased record.
* **recall@k** is hits / test points; ``None`` where there is no test point.
* **context tokens** of a test point is the sum of its records' token counts.
* A test point marked ``answerable: false`` (the conversation holds no answer)
  is kept apart: it is neither a hit nor a miss, and every number below
  (recall, strict recall, MRR, token cost) counts answerable test points only
  (``evals.breakdown`` reports the others).
* **evidence recall@k** (test points with ``evidence_turns`` only): *any* when
  at least one evidence turn is among the retrieved records, *all* when every
  one is, matched by turn identity (``evals.turn_refs``), not by text.

Additions (new keys; the definitions above keep their meaning):

* **strict hit**: every expected keyword, lower-cased, is a substring of the
  joined records; with no keywords it is the hit itself. **strict recall** is
  strict hits / test points.
* **rank**: the 1-based position of the first record that holds an expected
  keyword (or, with no keywords, the expected fact); ``None`` when none does.
  **MRR** is the mean of 1/rank over the test points, a point without a rank
  counting 0. (A keyword straddling two records in the joined text makes a hit
  without a rank; the records keep their own boundaries here.)
* **McNemar's exact test** compares two runs on the same test points: under
  "no difference", the discordant points (hit in one run only) split 50/50.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evals.runner import RunResult, TestPointResult
from evals.tokens import TokenCounter

__all__ = [
    "PointScore",
    "Scores",
    "evidence_hits",
    "first_match_rank",
    "interval_block",
    "is_hit",
    "is_strict_hit",
    "matched_keywords",
    "mcnemar_exact",
    "score_run",
    "wilson_interval",
]


def is_hit(expected_keywords: list[str], expected_fact: str, records: list[str]) -> bool:
    if not expected_keywords:
        target = expected_fact.lower()
        return any(target in r.lower() for r in records)
    haystack = "\n".join(records).lower()
    return any(kw.lower() in haystack for kw in expected_keywords)


def is_strict_hit(expected_keywords: list[str], expected_fact: str, records: list[str]) -> bool:
    """Every expected keyword among the records (joined as for a hit); the hit itself without keywords.
    The plain definition; :meth:`PointScore.of` decides hit and strict hit in one pass."""
    if not expected_keywords:
        return is_hit(expected_keywords, expected_fact, records)
    haystack = "\n".join(records).lower()
    return all(kw.lower() in haystack for kw in expected_keywords)


def first_match_rank(expected_keywords: list[str], expected_fact: str, records: list[str]) -> int | None:
    """1-based rank of the first record holding an expected keyword (the fact, without keywords)."""
    targets = [kw.lower() for kw in expected_keywords] or [expected_fact.lower()]
    for rank, record in enumerate(records, start=1):
        low = record.lower()
        if any(t in low for t in targets):
            return rank
    return None


def matched_keywords(expected_keywords: list[str], record: str) -> list[str]:
    """The expected keywords that occur in one record (for highlighting)."""
    low = record.lower()
    return [kw for kw in expected_keywords if kw and kw.lower() in low]


def wilson_interval(hits: int, total: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """95% Wilson score interval for a proportion; ``None`` when there is no observation.

    Wilson rather than the normal approximation because recall sits near 0 or
    1 on small corpora, where the normal interval leaves [0, 1].
    """
    if total <= 0:
        return None
    p = hits / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def interval_block(hits: int, total: int) -> dict[str, Any]:
    """A proportion's 95% Wilson interval as the JSON shows it (``low``/``high`` null without data)."""
    interval = wilson_interval(hits, total)
    return {
        "method": "wilson",
        "level": 0.95,
        "low": interval[0] if interval else None,
        "high": interval[1] if interval else None,
    }


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    ``only_a`` test points are hits in run A alone, ``only_b`` in run B alone.
    Under the null hypothesis each discordant point is a fair coin, so the
    p-value is twice the smaller binomial(n, 1/2) tail, capped at 1; with no
    discordant point there is no evidence of a difference (p = 1). Computed
    with exact integers, so large n neither overflows nor underflows.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts cannot be negative")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, tail / 2 ** (n - 1))


@dataclass(frozen=True)
class PointScore:
    hit: bool
    record_tokens: list[int]
    strict_hit: bool = False
    rank: int | None = None  # of the first matching record, 1-based
    answerable: bool = True
    evidence_any: bool | None = None  # None: the test point lists no evidence turns
    evidence_all: bool | None = None

    @classmethod
    def of(
        cls,
        expected_keywords: list[str],
        expected_fact: str,
        records: list[str],
        record_tokens: list[int],
        *,
        hit: bool | None = None,
        answerable: bool = True,
        evidence: tuple[bool | None, bool | None] = (None, None),
    ) -> PointScore:
        """Score one test point; ``hit`` as stored, when known, else computed.

        One pass over the joined text decides hit and strict hit; the rank is
        searched only when something matched (each record is a piece of the
        joined text), and stops at the first match: full_history's records run
        into the hundreds per point.
        """
        if expected_keywords:
            haystack = "\n".join(records).lower()
            keywords = [kw.lower() for kw in expected_keywords]
            found = [kw in haystack for kw in keywords]
            computed_hit, strict = any(found), all(found)
            rank = first_match_rank(expected_keywords, expected_fact, records) if computed_hit else None
        else:
            rank = first_match_rank(expected_keywords, expected_fact, records)
            computed_hit = strict = rank is not None
        return cls(
            hit=computed_hit if hit is None else hit,
            record_tokens=record_tokens,
            strict_hit=strict,
            rank=rank,
            answerable=answerable,
            evidence_any=evidence[0],
            evidence_all=evidence[1],
        )

    @property
    def context_tokens(self) -> int:
        return sum(self.record_tokens)


@dataclass(frozen=True)
class Scores:
    """Every number a run yields, per test point and aggregated."""

    tokenizer: str
    conversation_ids: list[str]
    points: list[list[PointScore]]  # per conversation, per test point

    def _answerable(self) -> list[PointScore]:
        return _answerable([p for conv in self.points for p in conv])

    @property
    def hits(self) -> int:
        return sum(p.hit for p in self._answerable())

    @property
    def total(self) -> int:
        return len(self._answerable())

    @property
    def recall(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.hits, self.total)

    @property
    def strict_hits(self) -> int:
        return sum(p.strict_hit for p in self._answerable())

    @property
    def strict_recall(self) -> float | None:
        return self.strict_hits / self.total if self.total else None

    @property
    def mrr(self) -> float | None:
        """Mean reciprocal rank of the first matching record; None without test points."""
        return _mrr(self._answerable())

    @property
    def context_tokens(self) -> int:
        return sum(p.context_tokens for p in self._answerable())

    @property
    def tokens_per_test_point(self) -> float | None:
        return self.context_tokens / self.total if self.total else None

    def recall_block(self) -> dict[str, Any]:
        """The seed's ``metrics.recall_at_k`` block."""
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            answerable = _answerable(conv)
            hits = sum(p.hit for p in answerable)
            total = len(answerable)
            per_conversation[cid] = {"hits": hits, "total": total, "recall": hits / total if total else None}
        return {"aggregate": self.recall, "hits": self.hits, "total": self.total, "per_conversation": per_conversation}

    def stats_blocks(self, turn_indices: list[list[int]]) -> dict[str, Any]:
        """The ``metrics`` keys added beside the seed's: recall's interval, strict recall, MRR,
        and per test point (``turn_indices`` aligned with ``points``) its strict hit and rank."""
        strict_per, mrr_per, per_point = {}, {}, {}
        for cid, conv, turns in zip(self.conversation_ids, self.points, turn_indices, strict=True):
            answerable = _answerable(conv)
            strict = sum(p.strict_hit for p in answerable)
            total = len(answerable)
            strict_per[cid] = {"hits": strict, "total": total, "recall": strict / total if total else None}
            mrr_per[cid] = _mrr(answerable)
            per_point[cid] = [
                {"turn_index": t, "hit": p.hit, "strict_hit": p.strict_hit, "rank": p.rank}
                for t, p in zip(turns, conv, strict=True)
            ]
        strict_hits = self.strict_hits
        return {
            "recall_at_k_interval": interval_block(self.hits, self.total),
            "strict_recall_at_k": {
                "aggregate": strict_hits / self.total if self.total else None,
                "hits": strict_hits,
                "total": self.total,
                "interval": interval_block(strict_hits, self.total),
                "per_conversation": strict_per,
            },
            "mrr": {"aggregate": self.mrr, "per_conversation": mrr_per},
            "per_test_point": per_point,
        }

    def tokens_block(self) -> dict[str, Any]:
        """The seed's ``metrics.tokens`` block.

        Where there is no test point the original reported 0 tokens per test
        point, not null; the seed format keeps that so old readers agree.
        """
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            answerable = _answerable(conv)
            total = sum(p.context_tokens for p in answerable)
            per_conversation[cid] = {
                "context_tokens_sum": total,
                "test_points": len(answerable),
                "context_tokens_per_test_point": total / len(answerable) if answerable else 0,
            }
        return {
            "aggregate_context_tokens": self.context_tokens,
            "aggregate_tokens_per_test_point": self.context_tokens / self.total if self.total else 0,
            "per_conversation": per_conversation,
        }


def _answerable(points: list[PointScore]) -> list[PointScore]:
    """The test points that count (unanswerable ones are reported apart)."""
    return [p for p in points if p.answerable]


def evidence_hits(point: TestPointResult) -> tuple[bool | None, bool | None]:
    """(any, all) evidence turns among the retrieved records; (None, None) without evidence turns."""
    if not point.evidence_turns or point.retrieved_turns is None:
        return None, None
    retrieved = set(point.retrieved_turns)
    found = [turn in retrieved for turn in point.evidence_turns]
    return any(found), all(found)


def _mrr(points: list[PointScore]) -> float | None:
    if not points:
        return None
    return sum(1 / p.rank for p in points if p.rank) / len(points)


def score_point(point: TestPointResult, counter: TokenCounter) -> PointScore:
    return PointScore.of(
        point.expected_keywords,
        point.expected_fact,
        point.retrieved_records,
        counter.counts(point.retrieved_records),
        answerable=point.answerable,
        evidence=evidence_hits(point),
    )


def score_run(run: RunResult, counter: TokenCounter | None = None) -> Scores:
    counter = counter or TokenCounter()
    counter.count_all(r for c in run.conversations for p in c.test_points for r in p.retrieved_records)
    return Scores(
        tokenizer=counter.tokenizer,
        conversation_ids=[c.conversation_id for c in run.conversations],
        points=[[score_point(p, counter) for p in c.test_points] for c in run.conversations],
    )
