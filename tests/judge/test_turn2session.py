"""LongMemEval's turn2session figures: over the whole ranking or absent, and never filed under "session"."""

from __future__ import annotations

import json
import math
from pathlib import Path

from helpers import FIXTURES
from helpers.cli import evals

from evals.judge.retrieval import turn2session
from evals.model.results import TestPointResult


def _point(ranked_turns: list[int], sessions: list[str], evidence: list[int]) -> TestPointResult:
    return TestPointResult(
        turn_index=0, question="q", expected_fact="f", expected_keywords=[], retrieved_records=[],
        evidence_turns=evidence, evidence_sessions=sorted({sessions[t] for t in evidence}),
        ranked_turns=ranked_turns, ranked_sessions=[sessions[t] for t in ranked_turns],
    )  # fmt: skip


SESSIONS = ["a", "a", "a", "b", "b", "c"]


def test_turn2session_widened_past_the_records_kept_is_absent():
    """Three records kept cover two sessions: at k=3 LongMemEval would read a fourth record, so the figure is absent."""
    point = _point([0, 1, 3], SESSIONS, [5])
    assert turn2session(point, 3, depth=3) is None


def test_turn2session_of_a_whole_ranking_reads_it_all():
    """A ranking handed over whole (no depth) is widened as far as it goes, as LongMemEval's function does."""
    point = _point([0, 1, 3], SESSIONS, [3])
    assert turn2session(point, 3) == (1.0, 1.0, 1 / math.log2(3))  # evidence at rank 3 (LongMemEval's discount)


def test_turn2session_within_the_records_kept_is_computed():
    """Where k sessions are covered within the records kept, the figure is the whole ranking's."""
    point = _point([0, 3, 5, 1], SESSIONS, [5])
    assert turn2session(point, 3, depth=4) == turn2session(point, 3)


def test_turn2session_without_sessions_is_absent():
    """A test point whose evidence turns have no session has no turn2session figure (not recall_any 0, recall_all 1)."""
    point = TestPointResult(
        turn_index=0, question="q", expected_fact="f", expected_keywords=[], retrieved_records=[],
        evidence_turns=[1], evidence_sessions=[], ranked_turns=[1, 0], ranked_sessions=[None, None],
    )  # fmt: skip
    assert turn2session(point, 1) is None


def test_output_carries_turn2session_apart_from_the_session_rows(tmp_path: Path):
    """`evals run --output` files turn2session under its own name with the depth its rankings were kept to; the
    "session" retrieval rows are the distinct-session figures only."""
    out = tmp_path / "out.json"
    store = tmp_path / "s.duckdb"
    args = ["run", "--runner", "oracle", "--corpus", FIXTURES / "sessions_corpus", "--store", store, "--k", "1"]
    result = evals(*args, "--cutoffs", "1,12", "--output", out, "--repo", tmp_path)
    assert result.exit_code == 0, result.output
    metrics = json.loads(out.read_text())["metrics"]
    block = metrics["turn2session"]
    assert block["k"] == 1 and block["ranking_depth"] == 12
    assert [row["metric"] for row in block["rows"]] == ["recall_any", "recall_all", "ndcg_any"]
    assert {row["level"] for row in metrics["retrieval"]} == {"turn", "session"}
