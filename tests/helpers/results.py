"""What a run's result document says, in the shapes the tests compare, and a run as the store gives it back."""

from __future__ import annotations

from evals.model.results import RunResult


def as_stored(run: RunResult) -> RunResult:
    """``run`` as the store gives it back: what was measured rather than retrieved (call timings, the footprint,
    each cutoff's tokens) lives on only as the run's metrics, so a run read back has none of it."""
    conversations = [
        c.model_copy(
            update={
                "held_records": None,
                "held_tokens": None,
                "session_count": None,
                "test_points": [p.model_copy(update={"cutoff_tokens": None}) for p in c.test_points],
            }
        )
        for c in run.conversations
    ]
    return run.model_copy(update={"timings": None, "long_retrievals": None, "conversations": conversations})


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
