"""A benchmark unit declared outside the package, as a third party would: one module and one entry point
(``toy_benchmark-0.1.dist-info/entry_points.txt``), found when this folder is on ``sys.path``.

Its file is a JSON array of ``{"history": [text, …], "question", "answer", "evidence": [index, …]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from evals.benchmarks.kit import Benchmark, Conversation, ImportReport, Rule, Unit, write_corpus

RULE = Rule(
    name="toy",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="every toy question with evidence",
    corpora="Toy (a test's own benchmark unit)",
    follows="the toy benchmark's imaginary evaluate.py",
)


def import_toy(file: Path, out: Path) -> ImportReport:
    report = ImportReport(source=str(file), out=Path(out))
    items = json.loads(Path(file).read_text(encoding="utf-8"))

    def conversations():
        for position, item in enumerate(items):
            turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(item["history"])]
            test_at = {"question": item["question"], "expected_fact": item["answer"],
                       "evidence_turns": item["evidence"], "category": "toy"}
            turns.append({"role": "user", "content": item["question"], "record": False, "test_at": test_at})
            report.questions += 1
            report.with_evidence += 1
            yield Conversation.model_validate({"id": f"{position:03d}_toy", "description": "a toy conversation", "turns": turns})

    report.conversations = write_corpus(conversations(), out, benchmark="toy")
    return report


UNIT = Unit(
    name="toy",
    title="Toy benchmark",
    releases=(
        Benchmark(
            name="toy",
            title="Toy benchmark (declared in test code)",
            homepage="https://example.invalid/toy",
            version="1",
            license="CC0",
            non_commercial=False,
            test_points="one question per conversation",
            evidence="turns",
            data=None,
            importer="toy",
        ),
    ),
    importer=import_toy,
    reads="the toy benchmark's toy.json",
    rule=RULE,
    categories={"toy": "toy questions"},
)
