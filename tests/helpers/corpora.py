"""Conversations and benchmark files the tests write: one valid conversation to spoil, and a LongMemEval-format file."""

from __future__ import annotations

import json
from pathlib import Path

from evals.benchmarks.longmemeval.protocol import QUESTION_TYPES


def conversation(cid: str = "c1", **overrides) -> dict:
    """A valid conversation (two turns, one test point) with ``overrides`` applied."""
    data = {
        "schema_version": "1",
        "id": cid,
        "description": "d",
        "turns": [
            {"role": "user", "content": "I use vim"},
            {
                "role": "user",
                "content": "q",
                "test_at": {"question": "editor?", "expected_fact": "vim", "expected_keywords": ["vim"]},
            },
        ],
    }
    data.update(overrides)
    return data


def longmemeval_file(path: Path) -> Path:
    """A LongMemEval-format file: one question of each type, and an abstention (``_abs``) question."""
    items = []
    for number, kind in enumerate((*QUESTION_TYPES, "temporal-reasoning")):
        abstention = number == len(QUESTION_TYPES)
        fact = f"orchid{number}"
        items.append(
            {
                "question_id": f"q{number}" + ("_abs" if abstention else ""),
                "question_type": kind,
                "question": f"What flower number {number} did I plant?",
                "answer": "You never said which flower." if abstention else fact,
                "question_date": f"2023/06/{10 + number:02d} (Sat) 09:00",
                "haystack_dates": [
                    "2023/05/20 (Sat) 02:21",
                    "2023/04/01 (Sat) 10:00",
                    "2023/05/25 (Thu) 08:00",
                    "2023/05/28 (Sun) 08:00",
                ],
                "haystack_session_ids": [f"s{number}a", f"s{number}b", f"s{number}c", f"s{number}d"],
                "haystack_sessions": [
                    [
                        {"role": "user", "content": f"I planted flower number {number}: {fact}.", "has_answer": not abstention},
                        {"role": "assistant", "content": "Lovely garden."},
                    ],
                    [{"role": "user", "content": "My bike is blue."}, {"role": "assistant", "content": "Noted."}],
                    [{"role": "user", "content": "It rained today."}, {"role": "assistant", "content": "Stay dry."}],
                    [{"role": "user", "content": "I read a book."}, {"role": "assistant", "content": "Which one?"}],
                ],
                "answer_session_ids": [] if abstention else [f"s{number}a"],
            }
        )
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def imported(name: str, source: Path, out: Path) -> Path:
    """``source`` imported as benchmark ``name``'s corpus into ``out`` (as `evals import-corpus` does); ``out``."""
    from evals.benchmarks.formats import import_corpus

    import_corpus(name, source, out)
    return out


def generated_longmemeval(folder: Path, questions: int = 3) -> Path:
    """bench/gen_longmemeval.py's LongMemEval_s-shaped file of ``questions`` questions (480 turns each, summaries of
    about 700,000 characters), written in ``folder`` and imported as the corpus ``folder/corpus`` (once)."""
    import sys

    from . import ROOT

    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    from gen_longmemeval import generate

    source, out = folder / "lme.json", folder / "corpus"
    if not out.exists():
        generate(source, questions, shape="s")
        imported("longmemeval", source, out)
    return out
