"""LongMemEval's answer session ids that name no session with turns, for `evals audit-labels --source`."""

from __future__ import annotations

from evals.benchmarks.kit import Corpus, Flag, Source, beside_conversations

__all__ = ["dangling_ids"]


def dangling_ids(source: Source, corpus: Corpus) -> list[Flag]:
    flags = []
    for _, item, conversation in beside_conversations(source, corpus):
        if conversation is None or not isinstance(item, dict):
            continue  # a question the importer skipped (an empty answer)
        ids = item.get("haystack_session_ids") or []
        sessions = item.get("haystack_sessions") or []
        with_turns = {i for i, s in zip(ids, sessions, strict=False) if isinstance(s, list) and s}
        unresolved = tuple(i for i in item.get("answer_session_ids") or [] if i not in with_turns)
        points = conversation.test_points()
        if unresolved and points:
            index, point = points[-1]
            flags.append(Flag.dangling(conversation.id, index, point, unresolved))
    return flags
