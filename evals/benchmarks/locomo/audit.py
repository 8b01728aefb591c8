"""LoCoMo's evidence ids in its published file that name no turn, for `evals audit-labels --source`."""

from __future__ import annotations

import re

from evals.benchmarks.kit import Corpus, EvalsError, Flag, Source, beside_conversations
from evals.benchmarks.locomo.importer import _DIA_ID  # the importer's own rule, so the audit resolves ids as the import did

__all__ = ["dangling_ids"]


def dangling_ids(source: Source, corpus: Corpus) -> list[Flag]:
    flags = []
    for position, sample, conversation in beside_conversations(source, corpus):
        if conversation is None:
            raise EvalsError(
                f"{source.name}: [{position}] has no conversation {position:03d}_… in the corpus; "
                "give the file the corpus was imported from"
            )
        sessions = source.get(sample, f"[{position}]", "conversation", dict)
        known = {
            turn.get("dia_id")
            for key, session in sessions.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(session, list)
            for turn in session
            if isinstance(turn, dict)
        }
        points = conversation.test_points()
        next_point = 0
        for _number, item in enumerate(source.items(source.get(sample, f"[{position}]", "qa", list), f"[{position}].qa")):
            question = item.get("question") if isinstance(item, dict) else None
            # Questions the importer skipped (an empty answer) have no test point: align by the question text.
            if next_point < len(points) and points[next_point][1].question == question:
                index, point = points[next_point]
                next_point += 1
            else:
                continue
            evidence = item.get("evidence") or []
            unresolved = tuple(
                dia_id
                for entry in evidence
                if isinstance(entry, str)
                for dia_id in (_DIA_ID.findall(entry) or [entry])
                if dia_id not in known
            )
            if unresolved:
                flags.append(Flag.dangling(conversation.id, index, point, unresolved))
        if next_point != len(points):
            raise EvalsError(
                f"{source.name}: [{position}] does not match corpus conversation {conversation.id}; "
                "give the file the corpus was imported from"
            )
    return flags
