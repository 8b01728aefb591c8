"""The original harness's JSON result shape, and its one-line summary."""

from __future__ import annotations

from typing import Any

import orjson

from evals.breakdown import metrics_additions
from evals.metrics import Scores
from evals.runner import RunResult, TestPointResult

__all__ = ["dump_json", "point_json", "seed_json", "summary_line"]


def dump_json(document: dict[str, Any]) -> bytes:
    """The document as indented UTF-8 JSON, laid out as the original harness wrote it.

    orjson, because the standard library's encoder drops to pure Python when
    indenting, which took most of a second on a 50 MB full_history result.
    """
    return orjson.dumps(document, option=orjson.OPT_INDENT_2)


_SEED_POINT_KEYS = frozenset({"turn_index", "question", "expected_fact", "expected_keywords", "retrieved_records"})


def point_json(point: TestPointResult) -> dict[str, Any]:
    """A test point as the seed wrote it, plus the later fields only where the corpus set them."""
    out = point.model_dump(include=_SEED_POINT_KEYS)
    if point.evidence_turns:
        out["evidence_turns"] = list(point.evidence_turns)
        out["retrieved_turns"] = point.retrieved_turns
    if point.category is not None:
        out["category"] = point.category
    if not point.answerable:
        out["answerable"] = False
    return out


def seed_json(run: RunResult, scores: Scores) -> dict[str, Any]:
    """The seed's output document; keys it never had (``tokenizer``, ``model``, the ``metrics``
    beside ``recall_at_k`` and ``tokens``, and the evidence, unanswerable and category blocks
    of corpora that use them) are additions only."""
    turn_indices = [[tp.turn_index for tp in c.test_points] for c in run.conversations]
    return {
        "strategy": run.strategy,
        "seed": run.seed,
        "k": run.k,
        "corpus_dir": run.corpus_dir,
        "conversation_count": len(run.conversations),
        "tokenizer": scores.tokenizer,
        "model": run.model,
        "metrics": {
            "recall_at_k": scores.recall_block(),
            "tokens": scores.tokens_block(),
            **scores.stats_blocks(turn_indices),
            **metrics_additions(run, scores),
        },
        "conversations": [
            {
                "conversation_id": c.conversation_id,
                "description": c.description,
                "turn_count": c.turn_count,
                "test_points": [point_json(tp) for tp in c.test_points],
            }
            for c in run.conversations
        ],
    }


def summary_line(document: dict[str, Any], destination: str | None = None) -> str:
    """The seed's one-line summary, from a seed-shaped document."""
    metrics = document["metrics"]
    line = (
        f"strategy={document['strategy'].get('name')} "
        f"convs={document['conversation_count']} "
        f"recall@{document['k']}={metrics['recall_at_k']['aggregate']} "
        f"tokens/tp={metrics['tokens']['aggregate_tokens_per_test_point']}"
    )
    if document.get("tokenizer") not in (None, "cl100k_base"):
        line += f" (tokens estimated: {document['tokenizer']})"
    return f"{line} -> {destination}" if destination else line
