"""LongMemEval (Wu et al. 2025, xiaowu0162/LongMemEval): the unit.

Its four releases (oracle, _s as first released, _s cleaned, _m cleaned) and their pins, its importer
(:mod:`.importer`, which streams: one question at a time, so the 2.7 GB _m file imports in bounded
memory), its headline rule, its question types, its protocol, and how the label audit knows its files
(:mod:`.audit`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.benchmarks.kit import EVIDENCE, Audit, Benchmark, ProtocolSpec, RemoteFile, Rule, SourceFile, Unit, claims_in

if TYPE_CHECKING:
    from evals.benchmarks.kit import Corpus, ImportReport, Source

__all__ = ["QUESTION_TYPES", "RULE", "UNIT"]

# LongMemEval's QA evaluation, whose judge templates its protocol reads (pinned by the end-to-end issue).
COMMIT = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
SOURCES = (
    SourceFile(
        "xiaowu0162/LongMemEval",
        COMMIT,
        "src/evaluation/evaluate_qa.py",
        "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251",
    ),
    SourceFile(
        "xiaowu0162/LongMemEval",
        COMMIT,
        "src/generation/run_generation.py",
        "4f1eb3c69d7ad40f04065b9c0bc86f6582441018fc6ff751d162d66c95baf672",
    ),
)
_HUB = "https://huggingface.co/datasets/xiaowu0162"
# The original hub repository, at the revision that uploaded its three files (named without ".json").
_REVISION = "d8673c8819c3e42833f9b1849300ab94c12bbb6a"
_ITEMS = "500 questions (30 abstention), one haystack each"
_EVIDENCE = "turns (has_answer) and sessions (answer_session_ids)"
_NOTES = "https://github.com/xiaowu0162/LongMemEval"

# Its question types (its `question_type` field), in the order its papers list them.
QUESTION_TYPE_NAMES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
JUDGE = "gpt-4o-2024-08-06"  # the judge model its evaluate_qa.py uses

# The question types (the corpus's categories), with the memory ability the paper tests by each.
QUESTION_TYPES = dict(
    zip(
        QUESTION_TYPE_NAMES,
        (
            "information extraction (from the user's words)",
            "information extraction (from the assistant's words)",
            "information extraction (preferences)",
            "multi-session reasoning",
            "temporal reasoning",
            "knowledge updates",
        ),
        strict=True,
    )
)

RULE = Rule(
    name="longmemeval",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="answerable questions with an evidence turn (_abs questions left out)",
    corpora="LongMemEval (evals import-corpus longmemeval; benchmark.json names it)",
    follows=EVIDENCE.follows,
    unanswerable_words="LongMemEval marks this an abstention question (_abs): the history does not answer it",
)


def _protocol() -> type:
    from evals.benchmarks.longmemeval.protocol import LongMemEvalProtocol

    return LongMemEvalProtocol


def _import(file: Path, out: Path) -> ImportReport:
    from evals.benchmarks.longmemeval.importer import import_longmemeval

    return import_longmemeval(file, out)


def _sniff(first: Any) -> bool:
    return isinstance(first, dict) and "haystack_sessions" in first


def _dangling(source: Source, corpus: Corpus) -> list[Any]:
    from evals.benchmarks.longmemeval.audit import dangling_ids

    return dangling_ids(source, corpus)


def _release(name: str, title: str, version: str, data: RemoteFile) -> Benchmark:
    return Benchmark(
        name=name,
        title=title,
        homepage=_NOTES,
        version=version,
        license="MIT",
        non_commercial=False,
        test_points=_ITEMS,
        evidence=_EVIDENCE,
        data=data,
        importer="longmemeval",
        sources=SOURCES,
    )


_CLEANED = "hub xiaowu0162/longmemeval-cleaned, main (digest locked on first download)"


# What LongMemEval's figures are, beside the harness's metrics.
METRIC_NOTES = {
    "answer_task_averaged": "LongMemEval averages its question types this way.",
    "answer_abstention_accuracy": "LongMemEval: its _abs questions, by its abstention template.",
    "evidence_recall_any": "LongMemEval's retrieval evaluation scores this population (run_retrieval.py).",
    "ndcg_any_lme": "LongMemEval computes NDCG this way (src/retrieval/eval_utils.py).",
    **dict.fromkeys(
        ("turn2session_recall_any", "turn2session_recall_all", "turn2session_ndcg_any"),
        "LongMemEval: its evaluate_retrieval_turn2session (src/retrieval/eval_utils.py), as its run_retrieval.py calls "
        "it; session.* its evaluate_retrieval.",
    ),
}


def turn_name(turn: int, session: str | None, place: int) -> str:
    """LongMemEval's session id (``haystack_session_ids``) and the turn's place in that session, from 1."""
    return f"{session} #{place}" if session else f"turn {turn}"


UNIT = Unit(
    claims=claims_in(__name__, "longmemeval"),
    order=20,
    name="longmemeval",
    title="LongMemEval",
    releases=(
        _release(
            "longmemeval_oracle",
            "LongMemEval oracle (evidence sessions only)",
            _CLEANED,
            RemoteFile(
                "longmemeval_oracle.json",
                f"{_HUB}/longmemeval-cleaned/resolve/main/longmemeval_oracle.json",
                listed_size="15 MB",
            ),
        ),
        _release(
            "longmemeval_s",
            "LongMemEval_s (about 40 sessions, 115k tokens per question), as first released",
            f"hub xiaowu0162/longmemeval, revision {_REVISION}",
            RemoteFile(
                "longmemeval_s",
                f"{_HUB}/longmemeval/resolve/{_REVISION}/longmemeval_s",
                listed_size="278 MB",
                aliases=("longmemeval_s.json",),
            ),
        ),
        _release(
            "longmemeval_s_cleaned",
            "LongMemEval_s, cleaned history sessions (2025/09)",
            _CLEANED,
            RemoteFile(
                "longmemeval_s_cleaned.json",
                f"{_HUB}/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json",
                listed_size="277 MB",
            ),
        ),
        _release(
            "longmemeval_m_cleaned",
            "LongMemEval_m, cleaned (about 500 sessions per question)",
            _CLEANED,
            RemoteFile(
                "longmemeval_m_cleaned.json",
                f"{_HUB}/longmemeval-cleaned/resolve/main/longmemeval_m_cleaned.json",
                listed_size="2.7 GB",
            ),
        ),
    ),
    importer=_import,
    reads="LongMemEval's longmemeval_s.json, _m or _oracle (huggingface xiaowu0162/longmemeval)",
    rule=RULE,
    categories=QUESTION_TYPES,
    protocols={"longmemeval": ProtocolSpec(_protocol, JUDGE, SOURCES)},
    audit=Audit("a LongMemEval file", _sniff, _dangling),
    turn_name=turn_name,
    metric_notes=METRIC_NOTES,
)
