"""`evals audit-labels`: test points whose evidence labels look wrong, and evidence ids that name no turn.

Published answer keys have errors (LoCoMo's github.com/snap-research/locomo/issues/34 cites an audit with 99
score-corrupting ones), and a wrong evidence label silently moves every turn-level figure. The audit finds two kinds, by rule:

- **the evidence misses the answer**: none of the test point's labelled evidence turns (their text and
  their session date) shares a content word with the answer, while another earlier, recorded turn of
  the same conversation holds every content word of the answer. Content words are the answer's
  lower-cased words and numbers less a fixed list of English function words, with a possessive "'s"
  and a plural "s" taken off. A test point is checked only when it is answerable, labels evidence and
  its answer has a content word that is not a count (an answer such as "2" or "three times" is summed
  over turns, never quoted from one, so any turn holding the number would be a false lead);
- **an evidence id names no turn** (with ``--source``, the benchmark file the corpus was imported
  from): a LoCoMo ``dia_id`` found in no session (resolved as the importer resolves it), or a
  LongMemEval answer session id naming no session with turns. The importer skips such ids, so only
  the source still holds them.

The audit never changes a figure. An errata file (``--errata``, its format in :mod:`evals.benchmarks.errata`) is
checked against the corpus and gives a second count "with errata" beside the one "as published".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.benchmarks.errata import Errata, apply_errata, parse_errata, resolve_errata, target_of
from evals.benchmarks.kit.importing import ImportFormatError, Source
from evals.errors import EvalsError
from evals.model.corpus import Conversation, Corpus, TestPoint
from evals.model.formatting import whole_number

__all__ = [
    "DANGLING",
    "MISSES",
    "LabelAudit",
    "Flag",
    "beside_conversations",
    "by_position",
    "audit_corpus",
    "content_words",
]

MISSES = "evidence misses the answer"
DANGLING = "evidence id names no turn"

# English function words: what an answer shares with any turn by chance.
_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves also
    yes s t d ll m re ve
    """.split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# An answer made of these alone is a count ("2", "three times"): summed over turns, never quoted from one.
_COUNT_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
    once twice thrice time
    """.split()
)


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text``: lower-cased words and numbers, no function words, "'s" and a plural "s" off."""
    words = set()
    for word in _WORD.findall(text.lower()):
        word = word.split("'", 1)[0]
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


@dataclass(frozen=True)
class Flag:
    conversation: str
    turn: int  # the test point's turn
    kind: str  # MISSES or DANGLING
    question: str
    answer: str
    evidence_turns: tuple[int, ...]
    found_in: tuple[int, ...] = ()  # MISSES: the other turns that hold every content word of the answer
    ids: tuple[str, ...] = ()  # DANGLING: the ids that name no turn

    @classmethod
    def dangling(cls, conversation: str, turn: int, point: Any, ids: tuple[str, ...]) -> Flag:
        """A DANGLING flag on test point ``point`` (a turn's ``test_at``) at ``turn``: ``ids`` name no turn."""
        return cls(conversation, turn, DANGLING, point.question, point.expected_fact, tuple(point.evidence_turns), ids=ids)

    @property
    def key(self) -> tuple[str, int]:
        return (self.conversation, self.turn)

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass
class LabelAudit:
    """What `evals audit-labels` found on one corpus (a unit's `Audit` says instead how its published file is read)."""

    corpus: str
    digest: str
    test_points: int
    checked: int  # answerable, labelled, with a content word in the answer
    flags: list[Flag]
    source: dict[str, str] | None = None  # the benchmark file the ids were checked in: path, sha256, format
    errata: Errata | None = None
    flags_with_errata: list[Flag] | None = None  # the same rules on the corrected labels
    notes: list[str] = field(default_factory=list)

    def count(self, kind: str, flags: list[Flag] | None = None) -> int:
        return sum(f.kind == kind for f in (self.flags if flags is None else flags))

    def as_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "corpus": self.corpus,
            "digest": self.digest,
            "test_points": self.test_points,
            "checked": self.checked,
            "flags": [f.as_dict() for f in self.flags],
            "source": self.source,
            "errata": None,
            "notes": self.notes,
        }
        if self.errata is not None:
            document["errata"] = {
                "path": self.errata.path,
                "sha256": self.errata.sha256,
                "source": self.errata.source,
                "origin": self.errata.origin,
                "corrections": [e.as_dict() for e in self.errata.entries.values()],
                "flags_with_errata": [f.as_dict() for f in self.flags_with_errata or []],
            }
        return document


# -- the content-word rule --------------------------------------------------------------------------------


class _Words:
    """Each turn's content words, computed once per conversation and only when asked for."""

    def __init__(self, conversation: Conversation) -> None:
        self.turns = conversation.turns
        self._content: dict[int, frozenset[str]] = {}

    def content(self, index: int) -> frozenset[str]:
        if index not in self._content:
            self._content[index] = content_words(self.turns[index].content)
        return self._content[index]

    def labelled(self, index: int) -> frozenset[str]:
        """A labelled turn shares a word through its session date too ("8 May, 2023" for "May 2023")."""
        date = self.turns[index].date
        return self.content(index) | content_words(date) if date else self.content(index)


def _misses(conversation: Conversation, words: _Words, index: int, point: TestPoint) -> tuple[bool, Flag | None]:
    """(checked, flag) for one test point under the content-word rule."""
    if not point.answerable or not point.evidence_turns:
        return False, None
    wanted = content_words(point.expected_fact)
    if not wanted or all(w.isdigit() or w in _COUNT_WORDS for w in wanted):
        return False, None
    if any(words.labelled(t) & wanted for t in point.evidence_turns):
        return True, None
    labelled = set(point.evidence_turns)
    turns = conversation.turns
    found = tuple(i for i in range(index) if turns[i].record and i not in labelled and wanted <= words.content(i))
    if not found:
        return True, None
    return True, Flag(conversation.id, index, MISSES, point.question, point.expected_fact, tuple(point.evidence_turns), found)


def _content_flags(conversations: list[Conversation]) -> tuple[int, list[Flag]]:
    checked, flags = 0, []
    for conversation in conversations:
        words = _Words(conversation)
        for index, point in conversation.test_points():
            was_checked, flag = _misses(conversation, words, index, point)
            checked += was_checked
            if flag is not None:
                flags.append(flag)
    return checked, flags


# -- evidence ids in the source file ----------------------------------------------------------------------


def by_position(corpus: Corpus) -> dict[int, Conversation]:
    """Conversations by their position in the source: the importers name them ``NNN_…`` after it."""
    found = {}
    for conversation in corpus.conversations:
        position = whole_number(conversation.id.split("_", 1)[0])  # ASCII digits: '²' passes isdigit(), fails int()
        if position is not None:
            found[position] = conversation
    return found


def beside_conversations(source: Source, corpus: Corpus) -> Iterator[tuple[int, Any, Conversation | None]]:
    """Each element of a published file (its top-level array) with its position and the conversation of ``corpus``
    imported from it (None: the importer made none of it)."""
    conversations = by_position(corpus)
    for position, element in enumerate(source.items(source.data, "")):
        yield position, element, conversations.get(position)


def _source_flags(path: Path, corpus: Corpus) -> tuple[dict[str, str], list[Flag]]:
    try:
        source = Source(path)
    except ImportFormatError as exc:
        raise EvalsError(str(exc)) from None
    from evals.benchmarks._registry import units  # each unit says which source files are its own

    data = source.data
    first = data[0] if isinstance(data, list) and data else None
    for unit in units().values():
        if unit.audit is not None and unit.audit.sniff(first):
            fmt = unit.name
            if corpus.benchmark is not None and corpus.benchmark != fmt:
                raise EvalsError(
                    f"{path}: a {fmt} file, but corpus {corpus.name} declares benchmark {corpus.benchmark}; "
                    "--source takes the file the corpus was imported from"
                )
            return {"path": str(path), "sha256": file_sha256(path), "format": fmt}, unit.audit.dangling(source, corpus)
    readers = " nor ".join(unit.audit.source for unit in units().values() if unit.audit is not None)
    raise EvalsError(f"{path}: neither {readers}; --source takes the file the corpus was imported from")


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path``, read a MiB at a time (a published file, recorded with what was read of it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


# -- the whole audit ---------------------------------------------------------------------------------------------


def audit_corpus(corpus: Corpus, *, source: Path | None = None, errata: Path | None = None) -> LabelAudit:
    """Run both rules over ``corpus`` (ids only with ``source``), and again with ``errata`` applied."""
    points = sum(len(c.test_points()) for c in corpus.conversations)
    checked, flags = _content_flags(corpus.conversations)
    audit = LabelAudit(corpus.name, corpus.digest, points, checked, flags)
    if source is not None:
        audit.source, dangling = _source_flags(Path(source), corpus)
        audit.flags = sorted([*flags, *dangling], key=lambda f: (f.conversation, f.turn, f.kind))
    else:
        audit.notes.append("evidence ids not checked: give --source, the benchmark file the corpus was imported from")
    if errata is not None:
        parsed = parse_errata(Path(errata))
        if parsed.benchmark is not None and parsed.benchmark != corpus.benchmark:
            declared = f"declares benchmark {corpus.benchmark!r}" if corpus.benchmark else "declares no benchmark"
            raise parsed.fail("benchmark", f"corrects {parsed.benchmark!r}, but corpus {corpus.name} {declared}")
        audit.errata = resolve_errata(parsed, target_of(corpus))
        _, corrected = _content_flags(apply_errata(corpus, audit.errata).conversations)
        # A corrected test point no longer rests on the published ids.
        kept = [
            f
            for f in audit.flags
            if f.kind == DANGLING and not (f.key in audit.errata.entries and audit.errata.entries[f.key].corrects_evidence)
        ]
        audit.flags_with_errata = sorted([*corrected, *kept], key=lambda f: (f.conversation, f.turn, f.kind))
    return audit
