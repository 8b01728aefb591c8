"""The numbers beyond the original harness's: evidence recall, unanswerable test points, per-category recall.

Each is computed from a run and its scores, and is ``None`` (its JSON key left
out) for a corpus that does not use the field it needs, so the result of an
old corpus is unchanged. Unanswerable test points never count in recall or
evidence recall; they are reported on their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evals.scoring import PointScore, Scores
from evals.stats import wilson_interval
from evals.results import RunResult, TestPointResult

__all__ = ["category_rows", "evidence_block", "metrics_additions", "rate", "unanswerable_block"]


def rate(hits: int, total: int) -> dict[str, Any]:
    """``{hits, total, recall, interval}``: recall None and no interval when total is 0."""
    interval = wilson_interval(hits, total)
    return {
        "hits": hits,
        "total": total,
        "recall": hits / total if total else None,
        "interval": list(interval) if interval else None,
    }


def _pairs(run: RunResult, scores: Scores) -> Iterator[tuple[str, TestPointResult, PointScore]]:
    for conversation, points in zip(run.conversations, scores.points, strict=True):
        for point, score in zip(conversation.test_points, points, strict=True):
            yield conversation.conversation_id, point, score


def _evidence(scored: list[PointScore]) -> dict[str, Any] | None:
    with_evidence = [s for s in scored if s.answerable and s.evidence_any is not None]
    if not with_evidence:
        return None
    return {
        "any": rate(sum(bool(s.evidence_any) for s in with_evidence), len(with_evidence)),
        "all": rate(sum(bool(s.evidence_all) for s in with_evidence), len(with_evidence)),
    }


def evidence_block(run: RunResult, scores: Scores) -> dict[str, Any] | None:
    """Evidence recall@k, ``{any: rate, all: rate}`` over answerable test points with evidence turns."""
    return _evidence([score for _, _, score in _pairs(run, scores)])


def unanswerable_block(run: RunResult, scores: Scores) -> dict[str, Any] | None:
    """The unanswerable test points: how many, what their retrieval cost, and where they are."""
    points = [(cid, point, score) for cid, point, score in _pairs(run, scores) if not score.answerable]
    if not points:
        return None
    tokens = sum(score.context_tokens for _, _, score in points)
    return {
        "count": len(points),
        "context_tokens": tokens,
        "tokens_per_test_point": tokens / len(points),
        "points": [
            {
                "conversation_id": cid,
                "turn_index": point.turn_index,
                "question": point.question,
                "record_count": len(point.retrieved_records),
            }
            for cid, point, _ in points
        ],
    }


def category_rows(run: RunResult, scores: Scores) -> list[dict[str, Any]] | None:
    """Per category (by name; test points without one last, as ``null``): recall, evidence recall,
    unanswerable count. None when no test point has a category."""
    groups: dict[str | None, list[PointScore]] = {}
    for _, point, score in _pairs(run, scores):
        groups.setdefault(point.category, []).append(score)
    if not any(name is not None for name in groups):
        return None
    rows = []
    for name in sorted(groups, key=lambda n: (n is None, n or "")):
        scored = groups[name]
        answerable = [s for s in scored if s.answerable]
        rows.append(
            {
                "category": name,
                **rate(sum(s.hit for s in answerable), len(answerable)),
                "evidence_recall_at_k": _evidence(scored),
                "unanswerable": len(scored) - len(answerable),
            }
        )
    return rows


def metrics_additions(run: RunResult, scores: Scores) -> dict[str, Any]:
    """The keys these add to the result JSON's ``metrics``, only those that apply."""
    out: dict[str, Any] = {}
    for key, value in (
        ("evidence_recall_at_k", evidence_block(run, scores)),
        ("unanswerable", unanswerable_block(run, scores)),
        ("by_category", category_rows(run, scores)),
    ):
        if value is not None:
            out[key] = value
    return out
