"""Turn names are the benchmark's own ids: each unit declares its naming (Unit.turn_name), and the
labels every page and the terminal show (evals.benchmarks.turn_ids.TurnIds) are checked against the ids the
benchmark's own files give the evidence: BEAM's source_chat_ids, LoCoMo's dia_ids, LongMemEval's session ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import ROOT

from evals.benchmarks.formats import import_corpus
from evals.benchmarks.turn_ids import TurnIds
from evals.model.corpus import load_corpus

FIXTURES = ROOT / "tests" / "fixtures" / "importers"


def _labels(corpus: Path, benchmark: str) -> list[tuple[str, list[str], list[str]]]:
    """(conversation id, question, evidence labels, evidence dates) of every test point with evidence."""
    loaded = load_corpus(corpus)
    out = []
    for conversation in loaded.conversations:
        ids = TurnIds(conversation.sessions, [t.date for t in conversation.turns], benchmark)
        for _, point in conversation.test_points():
            if point.evidence_turns:
                out.append((conversation.id, point.question, [ids.label(t) for t in point.evidence_turns]))
    return out


def _beam_tier(root: Path) -> Path:
    """A BEAM-shaped tier: one conversation of 12 messages (ids 0..11) in batches of two turns; three questions."""
    batches = []
    for i in range(12):
        if i % 4 == 0:
            batches.append({"batch_number": len(batches) + 1, "time_anchor": f"March-{len(batches) + 1}-2024", "turns": []})
        if i % 2 == 0:
            batches[-1]["turns"].append([])
        role = "user" if i % 2 == 0 else "assistant"
        batches[-1]["turns"][-1].append({"role": role, "id": i, "content": f"message {i}"})
    questions = {
        "information_extraction": [{"question": "Which login?", "answer": "x", "source_chat_ids": [5, 7]}],
        "event_ordering": [{"question": "Order?", "answer": "y", "source_chat_ids": [[2], [10]]}],
        "knowledge_update": [{"question": "Now?", "answer": "z", "source_chat_ids": {"original_info": [1], "updated_info": [9]}}],
    }
    folder = root / "100K" / "1"
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(batches))
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))
    return root / "100K"


def test_beam_labels_are_its_message_ids_and_batches(tmp_path: Path):
    """A BEAM evidence turn is labelled "message <the source_chat_ids id> · batch <its batch_number>"."""
    tier = _beam_tier(tmp_path / "beam")
    import_corpus("beam", tier, tmp_path / "corpus")
    chat = json.loads((tier / "1" / "chat.json").read_text())
    batch_of = {m["id"]: b["batch_number"] for b in chat for turn in b["turns"] for m in turn}
    asked = json.loads((tier / "1" / "probing_questions" / "probing_questions.json").read_text())
    expected = {}
    for items in asked.values():
        for item in items:
            found = item["source_chat_ids"]
            parts = found.values() if isinstance(found, dict) else found
            flat = sorted(i for part in parts for i in (part if isinstance(part, list) else [part]))
            expected[item["question"]] = [f"message {i} · batch {batch_of[i]}" for i in flat]
    got = {question: labels for _, question, labels in _labels(tmp_path / "corpus", "beam")}
    assert got == expected


def test_locomo_labels_are_its_dia_ids(tmp_path: Path):
    """Every LoCoMo evidence turn is labelled with a dia_id the question's own evidence list gives."""
    source = json.loads((FIXTURES / "locomo_small.json").read_text())
    evidence = {
        qa["question"]: {i for entry in qa.get("evidence") or [] for i in re.findall(r"D\d+:\d+", entry)}
        for sample in source
        for qa in sample["qa"]
    }
    import_corpus("locomo", FIXTURES / "locomo_small.json", tmp_path / "c")
    labelled = _labels(tmp_path / "c", "locomo")
    assert labelled
    for _, question, labels in labelled:
        assert set(labels) <= evidence[question], (question, labels)


def test_longmemeval_labels_are_its_session_ids_and_places(tmp_path: Path):
    """A LongMemEval evidence turn is "<answer session id> #<place in that session from 1>", where has_answer is."""
    source = json.loads((FIXTURES / "longmemeval_small.json").read_text())
    import_corpus("longmemeval", FIXTURES / "longmemeval_small.json", tmp_path / "c")
    marked = {
        q["question"]: {
            f"{sid} #{place}"
            for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
            for place, turn in enumerate(session, 1)
            if turn.get("has_answer")
        }
        for q in source
        if "haystack_session_ids" in q
    }
    labelled = _labels(tmp_path / "c", "longmemeval")
    assert labelled
    assert {question for _, question, _ in labelled} & set(marked)
    for _, question, labels in labelled:
        if question in marked:
            assert set(labels) == marked[question], (question, labels)


def test_a_corpus_without_a_benchmark_keeps_the_harness_names():
    """Without a declared unit, session_N keys give D<N>:<i>, other session ids the id and place, none "turn N"."""
    ids = TurnIds(["session_1", "session_1", "session_2", "abc", "abc", None], ["d1", "d1", "d2", "x", "x", None])
    assert [ids.label(t) for t in range(6)] == ["D1:1", "D1:2", "D2:1", "abc #1", "abc #2", "turn 5"]
