"""Benchmark folders for the graded judges' tests: a BEAM tier whose questions carry rubrics, and LoCoMo-Plus's data/
folder, each in the shape its importer reads; and what BEAM's code and scipy compute, to compare against."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importers"
EVENTS = ["alpha launch", "beta testing", "gamma release"]


def _chat(messages: int) -> list[dict]:
    """A BEAM chat of one batch: (user, assistant) turns of messages with ids 0..messages-1."""
    turns = [
        [
            {"role": "user", "id": i, "content": f"message {i} about topic {i // 2}"},
            {"role": "assistant", "id": i + 1, "content": f"message {i + 1} about topic {i // 2}"},
        ]
        for i in range(0, messages, 2)
    ]
    return [{"batch_number": 1, "time_anchor": "March-15-2024", "turns": turns}]


def beam_questions(n: int) -> dict[str, list[dict]]:
    """Conversation ``n``'s probing questions: four abilities, one question each, every one with a rubric."""
    return {
        "information_extraction": [
            {"question": f"What is topic 2? (conv {n})", "answer": "topic 2", "source_chat_ids": [4],
             "rubric": ["topic 2", f"detail {n}"]},
        ],
        "temporal_reasoning": [
            {"question": f"How long? (conv {n})", "answer": f"{4 * n} weeks", "source_chat_ids": [2],
             "rubric": [f"{4 * n} weeks"]},
        ],
        "event_ordering": [
            {"question": f"In what order? (conv {n})", "answer": ", ".join(EVENTS), "source_chat_ids": [[2], [6]],
             "rubric": list(EVENTS)},
        ],
        "abstention": [
            {"question": f"What is my dog's name? (conv {n})", "ideal_response": "no information",
             "rubric": ["no information"]},
        ],
    }  # fmt: skip


def beam_tier(root: Path, rubrics: bool = True) -> Path:
    """Two conversations of a 100K tier under ``root`` (without their rubrics when ``rubrics`` is False); its folder."""
    tier = root / "chats" / "100K"
    for n in (1, 2):
        folder = tier / str(n)
        (folder / "probing_questions").mkdir(parents=True)
        (folder / "chat.json").write_text(json.dumps(_chat(8)))
        questions = beam_questions(n)
        if not rubrics:
            questions = {k: [{f: v for f, v in q.items() if f != "rubric"} for q in items] for k, items in questions.items()}
        (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))
    return tier


PLUS_ITEMS = [
    {"relation_type": "causal", "cue_dialogue": "A: I learned to say no.\nB: Good for you.",
     "trigger_query": "A: I am overwhelmed.", "time_gap": "two weeks later"},
    {"relation_type": "state", "cue_dialogue": "A: I sprained my ankle.", "trigger_query": "B: Want to go running?",
     "time_gap": "one month later"},
    {"relation_type": "goal", "cue_dialogue": "B: I plan to learn Greek.", "trigger_query": "A: Any news?", "time_gap": "soon"},
]  # fmt: skip


def plus_folder(root: Path) -> Path:
    """LoCoMo-Plus's data/ folder: three items beside tests/fixtures/importers/locomo_small.json as locomo10.json."""
    folder = root / "data"
    folder.mkdir(parents=True)
    (folder / "locomo10.json").write_bytes((FIXTURES / "locomo_small.json").read_bytes())
    (folder / "locomo_plus.json").write_text(json.dumps(PLUS_ITEMS))
    return folder


def report_results(scores: dict[int, dict[str, list[float]]]) -> dict[str, float]:
    """BEAM's report_results.py over figures given per conversation and ability: each ability's mean per conversation,
    then the mean of those across conversations."""
    abilities = sorted({a for by in scores.values() for a in by})
    return {a: sum(sum(by[a]) / len(by[a]) for by in scores.values()) / len(scores) for a in abilities}
