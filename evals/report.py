"""The original harness's JSON result shape, its one-line summary, and ``evals run``'s."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import orjson

from evals.breakdown import metrics_additions
from evals.metrics import Scores, wilson_interval
from evals.runner import RunResult, TestPointResult
from evals.tokens import EXACT

if TYPE_CHECKING:
    from evals.llm import AnswerRun

__all__ = ["dump_json", "point_json", "run_line", "seed_json", "summary_line"]


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


def seed_json(run: RunResult, scores: Scores, answers: AnswerRun | None = None) -> dict[str, Any]:
    """The seed's output document; keys it never had (``tokenizer``, ``model``, the ``metrics``
    beside ``recall_at_k`` and ``tokens``, the evidence, unanswerable and category blocks of
    corpora that use them, and with answers ``metrics.answers``, ``answers`` and each test
    point's ``answer``) are additions only."""
    turn_indices = [[tp.turn_index for tp in c.test_points] for c in run.conversations]
    document = {
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
    if answers is not None:
        _add_answers(document, answers)
    return document


def _add_answers(document: dict[str, Any], answers: AnswerRun) -> None:
    document["metrics"]["answers"] = answers.metrics_block()
    document["answers"] = {
        "answer_model": answers.answer_model,
        "judge_model": answers.judge_model,
        "base_url": answers.base_url,
        "settings": answers.settings,
    }
    for conversation, points in zip(document["conversations"], answers.points, strict=True):
        for point, answer in zip(conversation["test_points"], points, strict=True):
            point["answer"] = dataclasses.asdict(answer)


def summary_line(document: dict[str, Any], destination: str | None = None) -> str:
    """The seed's one-line summary, from a seed-shaped document."""
    metrics = document["metrics"]
    line = (
        f"strategy={document['strategy'].get('name')} "
        f"convs={document['conversation_count']} "
        f"recall@{document['k']}={metrics['recall_at_k']['aggregate']} "
        f"tokens/tp={metrics['tokens']['aggregate_tokens_per_test_point']}"
    )
    answers = metrics.get("answers")
    if answers is not None:
        line += f" keyword_acc={answers['keyword_accuracy']}"
        if answers["judge_model"] is not None:
            line += f" accuracy={answers['accuracy']}"
    if document.get("tokenizer") not in (None, EXACT):
        line += f" (tokens estimated: {document['tokenizer']})"
    return f"{line} -> {destination}" if destination else line


def _proportion(hits: int, total: int) -> str:
    """``0.381 [0.208, 0.591] (8/21)``: 3 decimals, the 95% Wilson interval, the counts; ``null (0/0)`` without data."""
    interval = wilson_interval(hits, total)
    if interval is None:
        return f"null ({hits}/{total})"
    return f"{hits / total:.3f} [{interval[0]:.3f}, {interval[1]:.3f}] ({hits}/{total})"


def run_line(document: dict[str, Any], run_id: str, destination: str | None = None) -> str:
    """``evals run``'s one-line summary, from a seed-shaped document, with the numbers as the
    leaderboard shows them: ``run <id>: mneme recall@5 0.381 [0.208, 0.591] (8/21) tokens/tp 1393.5``.
    Tokens per test point carry a leading ``~`` when counted with the ~4-characters estimate;
    with answers, accuracy (judged) and keyword accuracy follow. ``null``: no test point."""
    metrics = document["metrics"]
    recall = metrics["recall_at_k"]
    tokens = metrics["tokens"]["aggregate_tokens_per_test_point"] if recall["total"] else None
    mark = "" if document.get("tokenizer", EXACT) == EXACT else "~"
    line = (
        f"run {run_id}: {document['strategy'].get('name')} "
        f"recall@{document['k']} {_proportion(recall['hits'], recall['total'])} "
        f"tokens/tp {'null' if tokens is None else f'{mark}{tokens:.1f}'}"
    )
    answers = metrics.get("answers")
    if answers is not None:
        if answers["judge_model"] is not None:
            line += f" accuracy {_proportion(answers['correct'], answers['judged'])}"
        keyword = answers["keyword_accuracy"]
        line += f" kw acc {'null' if keyword is None else f'{keyword:.3f}'}"
    return f"{line} -> {destination}" if destination else line
