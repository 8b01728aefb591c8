"""What a protocol is given for each test point: the question, the memory's context and, for the
published protocols, the retrieved records with the turn, speaker, session and date each one is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evals.strategies.base import Message

__all__ = ["AskedPoint", "ContextRecord", "speaker_names"]


@dataclass(frozen=True)
class ContextRecord:
    """One retrieved record, with what the corpus says about it when it is a conversation turn
    (:func:`evals.model.turn_refs.record_turns`). A record that is no turn (a summary, a mem0 fact) has
    only its text: no role, speaker, session or date."""

    text: str
    turn: int | None = None
    role: str | None = None
    speaker: str | None = None  # the speaker's name where the dataset names speakers ("Name: text" turns)
    session: str | None = None
    date: str | None = None  # the turn's session date, verbatim from the corpus

    @property
    def utterance(self) -> str:
        """The text without its ``"Name: "`` prefix, where the record names its speaker."""
        if self.speaker is not None and self.text.startswith(f"{self.speaker}: "):
            return self.text[len(self.speaker) + 2 :]
        return self.text


@dataclass(frozen=True)
class AskedPoint:
    """What a test point needs for its answer: where it is, what was asked and the context."""

    conversation_id: str
    turn_index: int
    question: str
    expected_fact: str
    expected_keywords: list[str]
    context: list[Message]  # what the strategy's context_for gave (the harness's prompts)
    answerable: bool = True
    category: str | None = None
    # The k retrieved records as scored, each with its turn's session and date (the published protocols).
    records: tuple[ContextRecord, ...] = ()
    question_date: str | None = None  # the question turn's date (LongMemEval's question_date)
    # The conversation's two speakers by name, the first speaker (role user) first; the roles when unnamed.
    speakers: tuple[str, str] = ("user", "assistant")
    # The records are every recorded turn before the question, in order (a whole-history strategy).
    whole_history: bool = False
    seed: int = 42  # the run's seed: a protocol's random choices (LoCoMo's option order) derive from it
    rubric: tuple[str, ...] = ()  # what a graded judge checks the answer against, one request each (BEAM)
    # The point's evidence turns as the corpus keeps them (conversation order), each as a record is given: LoCoMo-Plus's
    # judge reads their text. Empty where the protocol reads records only (the harness's prompts) or there is none.
    evidence: tuple[ContextRecord, ...] = ()


# A turn that names its speaker: "Name: text", the name at most 40 characters without a colon.
_SPEAKER = re.compile(r"([^\s:][^:\n]{0,39}): ")


def speaker_names(roles: Sequence[str], contents: Sequence[str]) -> dict[str, str]:
    """Each role's speaker name where the dataset names speakers: the name most of the role's turns
    open with (``"Name: "``), when at least half of them (and two) do, or when every turn of the
    conversation opens with a name (a short LoCoMo conversation whose second speaker says one thing).
    LoCoMo's importer writes both speakers' turns that way, under the roles user and assistant."""
    counts: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for role, content in zip(roles, contents, strict=True):
        totals[role] = totals.get(role, 0) + 1
        found = _SPEAKER.match(content)
        if found:
            names = counts.setdefault(role, {})
            names[found.group(1)] = names.get(found.group(1), 0) + 1
    every = sum(sum(names.values()) for names in counts.values()) == len(roles)
    named = {}
    for role, names in counts.items():
        name, seen = max(names.items(), key=lambda item: item[1])
        if every or (seen * 2 >= totals[role] and seen >= 2):
            named[role] = name
    return named
