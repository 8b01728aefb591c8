"""Text a published page may not show: a benchmark's turns, questions and answer keys where its licence withholds them.

Whether a corpus's text may be shown is decided once, in the benchmark registry
(:func:`evals.benchmarks.text_withheld`, from each unit's declared licence). Here the build applies it where the
texts come in: the corpus's texts file gives its turns as "" (:class:`evals.site._corpus.TextsFile`), and each
stored run and each corpus's test points pass through :func:`run_without_text` and :func:`points_without_text`,
so every page kind built on them shows the benchmark's own turn ids (:mod:`evals.benchmarks.turn_ids`), the
figures and the verdicts, never the text; the drill-downs and transcripts say why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from evals.benchmarks import text_withheld
from evals.store import RunSummary, StoredRun

__all__ = ["points_without_text", "run_without_text", "withheld_corpora"]


def withheld_corpora(summaries: Iterable[RunSummary]) -> dict[str, str]:
    """Corpus digest -> why its text is not shown, for every corpus whose benchmark's licence withholds it."""
    out: dict[str, str] = {}
    for summary in summaries:
        if summary.corpus_digest not in out:
            out[summary.corpus_digest] = text_withheld(summary.benchmark)
    return {digest: why for digest, why in out.items() if why}


def points_without_text(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A corpus's test points (``Store.corpus_test_points``'s dicts) with no question, answer key or keyword."""
    return [{**point, "question": "", "expected_fact": "", "expected_keywords": []} for point in points]


def run_without_text(stored: StoredRun) -> StoredRun:
    """A stored run (or a slice of one) with no benchmark text: no turn, record, question, answer key, keyword or
    rubric; its ids, rankings, token counts and verdicts as they were."""
    conversations = [
        conversation.model_copy(
            update={
                "test_points": [
                    point.model_copy(
                        update={
                            "question": "",
                            "expected_fact": "",
                            "expected_keywords": [],
                            "rubric": [],
                            "retrieved_records": [""] * len(point.retrieved_records),
                        }
                    )
                    for point in conversation.test_points
                ]
            }
        )
        for conversation in stored.run.conversations
    ]
    transcripts = {cid: [(role, "") for role, _ in turns] for cid, turns in stored.transcripts.items()}
    return dataclasses.replace(
        stored, run=stored.run.model_copy(update={"conversations": conversations}), transcripts=transcripts
    )
