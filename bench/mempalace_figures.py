"""MemPalace's LoCoMo figure from an exported `mempalace` run: recall_frac@10 as MemPalace's
``benchmarks/locomo_bench.py`` (9b7cfc99) computes it (``compute_retrieval_recall``: the share of a
question's evidence retrieved; its population counts a question without evidence as 1.0).

    evals export RUN_ID --store STORE --output run.json
    python bench/mempalace_figures.py run.json CORPUS_DIR dialog|session

dialog: turn level, from each test point's retrieved turns; session: session level, each record (a
session document) mapped back to its session by its text, so it does not depend on how the store
keeps a record's turns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evals.strategies.mempalace import dialog_text, session_text


def main(export_file: str, corpus_dir: str, granularity: str) -> None:
    export, corpus = json.loads(Path(export_file).read_text(encoding="utf-8")), Path(corpus_dir)
    fractions: list[float] = []
    hits = empty = 0
    for conversation in export["conversations"]:
        data = json.loads((corpus / f"{conversation['conversation_id']}.json").read_text(encoding="utf-8"))
        sessions: dict[str, list[str]] = {}
        for turn in data["turns"]:
            if turn.get("record", True) and turn.get("session"):
                sessions.setdefault(turn["session"], []).append(dialog_text(turn["role"], turn["content"]))
        session_of = {session_text(dialogs): key for key, dialogs in sessions.items()}
        for point in conversation["test_points"]:
            if granularity == "dialog":
                evidence, found = set(point.get("evidence_turns") or []), set(point.get("retrieved_turns") or [])
            else:
                evidence = set(point.get("evidence_sessions") or [])
                found = {session_of[text] for text in point["retrieved_records"]}
            if not evidence:
                empty += 1
                continue
            fractions.append(len(evidence & found) / len(evidence))
            hits += bool(evidence & found)
    n = len(fractions)
    print(
        f"{granularity}: recall_frac@10 {sum(fractions) / n:.4f} over {n} questions with evidence; "
        f"{(sum(fractions) + empty) / (n + empty):.4f} over {n + empty}, {empty} without evidence counted 1.0 "
        f"(MemPalace's population); recall_any@10 {hits / n:.4f}"
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
