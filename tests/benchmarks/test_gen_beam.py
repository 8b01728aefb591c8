"""bench/gen_beam.py: a deterministic BEAM-shaped tier (the 10M tier's plan layout) that the importer reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from helpers import ROOT
from helpers.cli import evals_output

from evals.benchmarks.beam import ABILITIES as BEAM_ABILITIES
from evals.model.corpus import load_corpus

sys.path.insert(0, str(ROOT / "bench"))
from gen_beam import ABILITIES, MESSAGES_PER_PLAN, generate  # noqa: E402


def tier(tmp_path: Path, name: str = "tier", **sizes: int) -> Path:
    return generate(tmp_path / name, **({"conversations": 2, "turns": 40, "tokens_per_message": 20} | sizes))


def test_same_arguments_give_the_same_bytes(tmp_path):
    """Two generations with the same arguments are byte-identical, file for file."""
    a, b = tier(tmp_path, "a"), tier(tmp_path, "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*.json"))
    assert files and all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_the_chat_is_plans_of_batches_with_ids_across_the_conversation(tmp_path):
    """chat.json is a list of one-key ``plan-N`` objects of batches; message ids are 0..n-1 in reading order."""
    folder = tier(tmp_path, turns=2 * MESSAGES_PER_PLAN + 10, conversations=1)
    plans = json.loads((folder / "1" / "chat.json").read_text())
    assert [list(p) for p in plans] == [["plan-0"], ["plan-1"]]
    messages = [m for p in plans for batches in p.values() for b in batches for turn in b["turns"] for m in turn]
    assert [m["id"] for m in messages] == list(range(2 * MESSAGES_PER_PLAN + 10))
    assert {m["role"] for m in messages[::2]} == {"user"} and {m["role"] for m in messages[1::2]} == {"assistant"}


def test_the_questions_are_two_per_ability_in_beams_shapes(tmp_path):
    """probing_questions.json: BEAM's ten abilities, two questions each, with rubric lists and every evidence shape."""
    questions = json.loads((tier(tmp_path) / "1" / "probing_questions" / "probing_questions.json").read_text())
    assert list(questions) == list(ABILITIES) == sorted(BEAM_ABILITIES)
    assert all(len(items) == 2 and all(isinstance(q["rubric"], list) for q in items) for items in questions.values())
    shapes = {ability: type(items[0].get("source_chat_ids")).__name__ for ability, items in questions.items()}
    assert (
        shapes["abstention"] == "NoneType" and shapes["knowledge_update"] == "dict" and shapes["information_extraction"] == "list"
    )
    assert any(isinstance(part, list) for part in questions["event_ordering"][0]["source_chat_ids"])


def test_the_tier_imports_with_the_declared_counts(tmp_path):
    """evals import-corpus beam reads it: every message a turn, 20 questions a conversation, 18 with evidence, none dangling."""
    folder = tier(tmp_path)
    said = evals_output("import-corpus", "beam", folder, "--out", tmp_path / "corpus")
    assert "2 conversations, 40 questions" in said and "36 of 40 questions name evidence; 0 evidence ids" in said
    conversations = load_corpus(tmp_path / "corpus").conversations
    assert [len(c.turns) for c in conversations] == [40 + 20, 40 + 20]
    first = conversations[0]
    assert all(t.session and t.session.startswith("plan-0 batch ") for t in first.turns[:40])
    point = next(test for _, test in first.test_points() if test.category == "information_extraction")
    (evidence,) = point.evidence_turns
    assert point.expected_keywords == [point.expected_fact] and point.expected_fact in first.turns[evidence].content
