"""Pure functions from a run to numbers: recall@k, token cost, intervals.

Definitions (the original harness's, kept exactly):

* A test point is a **hit** when any expected keyword, lower-cased, is a
  substring of the retrieved records joined with ``"\\n"`` and lower-cased;
  with no keywords, when the lower-cased expected fact is a substring of any
  one lower-cased record.
* **recall@k** is hits / test points; ``None`` where there is no test point.
* **context tokens** of a test point is the sum of its records' token counts.
* A test point marked ``answerable: false`` (the conversation holds no answer)
  is kept apart: it is neither a hit nor a miss, and recall and token cost
  count answerable test points only (``evals.breakdown`` reports the others).
* **evidence recall@k** (test points with ``evidence_turns`` only): *any* when
  at least one evidence turn is among the retrieved records, *all* when every
  one is, matched by turn identity (``evals.turn_refs``), not by text.
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
    "is_hit",
    "matched_keywords",
    "score_run",
    "wilson_interval",
]


def is_hit(expected_keywords: list[str], expected_fact: str, records: list[str]) -> bool:
    if not expected_keywords:
        target = expected_fact.lower()
        return any(target in r.lower() for r in records)
    haystack = "\n".join(records).lower()
    return any(kw.lower() in haystack for kw in expected_keywords)


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


@dataclass(frozen=True)
class PointScore:
    hit: bool
    record_tokens: list[int]
    answerable: bool = True
    evidence_any: bool | None = None  # None: the test point lists no evidence turns
    evidence_all: bool | None = None

    @property
    def context_tokens(self) -> int:
        return sum(self.record_tokens)


@dataclass(frozen=True)
class Scores:
    """Every number a run yields, per test point and aggregated."""

    tokenizer: str
    conversation_ids: list[str]
    points: list[list[PointScore]]  # per conversation, per test point

    @property
    def hits(self) -> int:
        return sum(p.hit for conv in self.points for p in conv if p.answerable)

    @property
    def total(self) -> int:
        return sum(p.answerable for conv in self.points for p in conv)

    @property
    def recall(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.hits, self.total)

    @property
    def context_tokens(self) -> int:
        return sum(p.context_tokens for conv in self.points for p in conv if p.answerable)

    @property
    def tokens_per_test_point(self) -> float | None:
        return self.context_tokens / self.total if self.total else None

    def recall_block(self) -> dict[str, Any]:
        """The seed's ``metrics.recall_at_k`` block."""
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            hits = sum(p.hit for p in conv if p.answerable)
            total = sum(p.answerable for p in conv)
            per_conversation[cid] = {"hits": hits, "total": total, "recall": hits / total if total else None}
        return {"aggregate": self.recall, "hits": self.hits, "total": self.total, "per_conversation": per_conversation}

    def tokens_block(self) -> dict[str, Any]:
        """The seed's ``metrics.tokens`` block.

        Where there is no test point the original reported 0 tokens per test
        point, not null; the seed format keeps that so old readers agree.
        """
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            total = sum(p.context_tokens for p in conv if p.answerable)
            count = sum(p.answerable for p in conv)
            per_conversation[cid] = {
                "context_tokens_sum": total,
                "test_points": count,
                "context_tokens_per_test_point": total / count if count else 0,
            }
        return {
            "aggregate_context_tokens": self.context_tokens,
            "aggregate_tokens_per_test_point": self.context_tokens / self.total if self.total else 0,
            "per_conversation": per_conversation,
        }


def evidence_hits(point: TestPointResult) -> tuple[bool | None, bool | None]:
    """(any, all) evidence turns among the retrieved records; (None, None) without evidence turns."""
    if not point.evidence_turns or point.retrieved_turns is None:
        return None, None
    retrieved = set(point.retrieved_turns)
    found = [turn in retrieved for turn in point.evidence_turns]
    return any(found), all(found)


def score_point(point: TestPointResult, counter: TokenCounter) -> PointScore:
    evidence_any, evidence_all = evidence_hits(point)
    return PointScore(
        hit=is_hit(point.expected_keywords, point.expected_fact, point.retrieved_records),
        record_tokens=counter.counts(point.retrieved_records),
        answerable=point.answerable,
        evidence_any=evidence_any,
        evidence_all=evidence_all,
    )


def score_run(run: RunResult, counter: TokenCounter | None = None) -> Scores:
    counter = counter or TokenCounter()
    counter.count_all(r for c in run.conversations for p in c.test_points for r in p.retrieved_records)
    return Scores(
        tokenizer=counter.tokenizer,
        conversation_ids=[c.conversation_id for c in run.conversations],
        points=[[score_point(p, counter) for p in c.test_points] for c in run.conversations],
    )
