"""Pure functions from a run to numbers: recall@k, token cost, intervals.

Definitions (the original harness's, kept exactly):

* A test point is a **hit** when any expected keyword, lower-cased, is a
  substring of the retrieved records joined with ``"\\n"`` and lower-cased;
  with no keywords, when the lower-cased expected fact is a substring of any
  one lower-cased record.
* **recall@k** is hits / test points; ``None`` where there is no test point.
* **context tokens** of a test point is the sum of its records' token counts.
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
        return sum(p.hit for conv in self.points for p in conv)

    @property
    def total(self) -> int:
        return sum(len(conv) for conv in self.points)

    @property
    def recall(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.hits, self.total)

    @property
    def context_tokens(self) -> int:
        return sum(p.context_tokens for conv in self.points for p in conv)

    @property
    def tokens_per_test_point(self) -> float | None:
        return self.context_tokens / self.total if self.total else None

    def recall_block(self) -> dict[str, Any]:
        """The seed's ``metrics.recall_at_k`` block."""
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            hits = sum(p.hit for p in conv)
            per_conversation[cid] = {"hits": hits, "total": len(conv), "recall": hits / len(conv) if conv else None}
        return {"aggregate": self.recall, "hits": self.hits, "total": self.total, "per_conversation": per_conversation}

    def tokens_block(self) -> dict[str, Any]:
        """The seed's ``metrics.tokens`` block.

        Where there is no test point the original reported 0 tokens per test
        point, not null; the seed format keeps that so old readers agree.
        """
        per_conversation = {}
        for cid, conv in zip(self.conversation_ids, self.points, strict=True):
            total = sum(p.context_tokens for p in conv)
            per_conversation[cid] = {
                "context_tokens_sum": total,
                "test_points": len(conv),
                "context_tokens_per_test_point": total / len(conv) if conv else 0,
            }
        return {
            "aggregate_context_tokens": self.context_tokens,
            "aggregate_tokens_per_test_point": self.context_tokens / self.total if self.total else 0,
            "per_conversation": per_conversation,
        }


def score_point(point: TestPointResult, counter: TokenCounter) -> PointScore:
    return PointScore(
        hit=is_hit(point.expected_keywords, point.expected_fact, point.retrieved_records),
        record_tokens=counter.counts(point.retrieved_records),
    )


def score_run(run: RunResult, counter: TokenCounter | None = None) -> Scores:
    counter = counter or TokenCounter()
    counter.count_all(r for c in run.conversations for p in c.test_points for r in p.retrieved_records)
    return Scores(
        tokenizer=counter.tokenizer,
        conversation_ids=[c.conversation_id for c in run.conversations],
        points=[[score_point(p, counter) for p in c.test_points] for c in run.conversations],
    )
