"""The numbers beyond the original harness's: evidence recall, unanswerable test points, per-category recall.

Each block is read from the run's per-point values as aggregated by
:func:`evals.metrics.grouped` (the whole run, or each category), and is
``None`` (its JSON key left out) for a corpus that does not use the field it
needs, so the result of an old corpus is unchanged. Unanswerable test points
never count in recall or evidence recall; they are reported on their own.
"""

from __future__ import annotations

from typing import Any

from evals.metrics import ALL, MetricValue, PointValues, grouped
from evals.results import RunResult

__all__ = ["category_rows", "evidence_block", "metrics_additions", "rate", "unanswerable_block"]

# What these blocks read of the grouped values.
_READ = ("recall", "evidence_recall_any", "evidence_recall_all", "unanswerable_tokens")


def rate(value: MetricValue) -> dict[str, Any]:
    """``{hits, total, recall, interval}`` of a proportion: recall None and no interval when total is 0."""
    return {
        "hits": value.successes or 0,
        "total": value.n,
        "recall": value.value,
        "interval": None if value.low is None else [value.low, value.high],
    }


def _evidence(values: dict[str, MetricValue]) -> dict[str, Any] | None:
    if "evidence_recall_any" not in values:
        return None
    return {"any": rate(values["evidence_recall_any"]), "all": rate(values["evidence_recall_all"])}


def evidence_block(values: PointValues) -> dict[str, Any] | None:
    """Evidence recall@k, ``{any: rate, all: rate}`` over answerable test points with evidence turns."""
    return _evidence(grouped(values, names=_READ)[ALL])


def unanswerable_block(run: RunResult, values: PointValues) -> dict[str, Any] | None:
    """The unanswerable test points: how many, what their retrieval cost, and where they are."""
    spent = grouped(values, names=_READ)[ALL].get("unanswerable_tokens")
    if spent is None:
        return None
    return {
        "count": spent.n,
        "context_tokens": spent.total,
        "tokens_per_test_point": spent.value,
        "points": [
            {
                "conversation_id": conversation.conversation_id,
                "turn_index": point.turn_index,
                "question": point.question,
                "record_count": len(point.retrieved_records),
            }
            for conversation in run.conversations
            for point in conversation.test_points
            if not point.answerable
        ],
    }


def category_rows(values: PointValues) -> list[dict[str, Any]] | None:
    """Per category (by name; test points without one last, as ``null``): recall, evidence recall,
    unanswerable count. None when no test point has a category."""
    groups = grouped(values, "category", _READ)
    if not any(name is not None for name in groups):
        return None
    return [
        {
            "category": name,
            **rate(found["recall"]),
            "evidence_recall_at_k": _evidence(found),
            "unanswerable": found["unanswerable_tokens"].n if "unanswerable_tokens" in found else 0,
        }
        for name, found in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or ""))
    ]


def metrics_additions(run: RunResult, values: PointValues) -> dict[str, Any]:
    """The keys these add to the result JSON's ``metrics``, only those that apply."""
    out: dict[str, Any] = {}
    for key, value in (
        ("evidence_recall_at_k", evidence_block(values)),
        ("unanswerable", unanswerable_block(run, values)),
        ("by_category", category_rows(values)),
    ):
        if value is not None:
            out[key] = value
    return out
