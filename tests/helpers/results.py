"""What a run's result document says, in the shapes the tests compare."""

from __future__ import annotations


def categories(metrics: dict) -> list[tuple]:
    """Per category of a result's ``metrics``: (category, hits, total, evidence any hits, evidence all hits, unanswerable)."""
    return [
        (
            r["category"],
            r["hits"],
            r["total"],
            r["evidence_recall_at_k"] and r["evidence_recall_at_k"]["any"]["hits"],
            r["evidence_recall_at_k"] and r["evidence_recall_at_k"]["all"]["hits"],
            r["unanswerable"],
        )
        for r in metrics["by_category"]
    ]
