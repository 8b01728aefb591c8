"""bench/gen_longmemeval.py: a deterministic LongMemEval-shaped file that the importer reads."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import ROOT

from evals.benchmarks.formats import import_corpus
from evals.model.corpus import load_corpus

sys.path.insert(0, str(ROOT / "bench"))
from gen_longmemeval import SHAPES, generate  # noqa: E402

# Generating a LongMemEval-shaped file takes seconds a call.
pytestmark = pytest.mark.slow


def test_same_arguments_give_the_same_bytes(tmp_path):
    """Two generations with the same arguments are byte-identical."""
    generate(tmp_path / "a.json", 3, abs_every=2)
    generate(tmp_path / "b.json", 3, abs_every=2)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_questions_have_the_real_files_shape(tmp_path):
    """Each question: the default number of sessions, one evidence session holding a has_answer turn, dates per session."""
    generate(tmp_path / "s.json", 3, abs_every=2)
    questions = json.loads((tmp_path / "s.json").read_text())
    sessions = SHAPES["s"][0]
    answerable, abstention = questions[0], questions[1]
    assert len(answerable["haystack_sessions"]) == len(answerable["haystack_dates"]) == sessions
    (evidence,) = answerable["answer_session_ids"]
    at = answerable["haystack_session_ids"].index(evidence)
    assert any(t.get("has_answer") and answerable["answer"] in t["content"] for t in answerable["haystack_sessions"][at])
    assert abstention["question_id"].endswith("_abs") and abstention["answer_session_ids"] == []


def test_the_file_imports_as_a_corpus(tmp_path):
    """evals import-corpus longmemeval reads it: one conversation per question, the abstention unanswerable."""
    generate(tmp_path / "s.json", 2, abs_every=2)
    import_corpus("longmemeval", tmp_path / "s.json", tmp_path / "corpus")
    conversations = load_corpus(tmp_path / "corpus").conversations
    points = [test for c in conversations for _, test in c.test_points()]
    assert len(conversations) == 2 and [p.answerable for p in points] == [True, False]
    assert points[0].evidence_turns


def test_the_file_imports_with_sessions(tmp_path):
    """Imported, every history turn has its session and date, and the answer session is the evidence session."""
    generate(tmp_path / "s.json", 2, abs_every=2)
    import_corpus("longmemeval", tmp_path / "s.json", tmp_path / "corpus")
    answerable, abstention = load_corpus(tmp_path / "corpus").conversations
    assert all(t.session and t.date for t in answerable.turns[:-1])
    assert answerable.turns[-1].test_at.evidence_sessions == ["answer_0"]
    assert abstention.turns[-1].test_at.evidence_sessions == []
