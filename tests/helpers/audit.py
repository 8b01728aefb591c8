"""A published answer-key audit of LoCoMo (dial481/locomo-audit's format), written by the tests for the planted fixture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from . import FIXTURES

# A LoCoMo file with labels planted wrong on purpose, as the audit's data/locomo10.json.
PLANTED = FIXTURES / "audit" / "locomo_planted.json"


def audit_entry(
    qid: str, question: str, golden, cited: list[str], correct: list[str], answer, kind: str, category: int = 4
) -> dict:
    """One entry of the audit's errors_conv_N.json, in its shape (our own text in its fields)."""
    return {
        "question_id": qid,
        "question": question,
        "golden_answer": golden,
        "category": category,
        "error_type": kind,
        "cited_evidence": cited,
        "correct_evidence": correct,
        "reasoning": "stand-in",
        "correct_answer": answer,
    }


def write_audit(root: Path, conversations: dict[int, list[dict]], license_text: str) -> Path:
    """A copy of the audit's layout at ``root``: LICENSE, data/locomo10.json (the planted file, audited) and
    audit/errors_conv_N.json for each conversation N given its entries."""
    (root / "audit").mkdir(parents=True)
    (root / "data").mkdir()
    shutil.copy(PLANTED, root / "data" / "locomo10.json")
    (root / "LICENSE").write_text(license_text)
    for number, entries in conversations.items():
        (root / "audit" / f"errors_conv_{number}.json").write_text(json.dumps(entries))
    return root
