"""`evals audit-labels`: test points whose evidence labels look wrong, and evidence ids that name no turn.

Published answer keys have errors (LoCoMo issue #34 cites an audit with 99 score-corrupting ones), and
a wrong evidence label silently moves every turn-level figure. The audit finds two kinds, by rule:

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

The audit never changes a figure. An errata file (``--errata``: test point -> corrected evidence turns,
with a reason and a source) is checked against the corpus, recorded by its source and SHA-256, and
gives a second count "with errata" beside the one "as published"; :func:`apply_errata` makes the
corrected corpus for a figure computed apart, never mixed with the published one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from evals import jsonfile
from evals.corpus import Conversation, Corpus, TestPoint
from evals.errors import EvalsError
from evals.formatting import whole_number
from evals.importers._common import ImportFormatError, Source
from evals.importers.locomo import _DIA_ID  # the importer's own rule, so the audit resolves ids as the import did

__all__ = [
    "DANGLING",
    "MISSES",
    "Audit",
    "Errata",
    "Erratum",
    "Flag",
    "apply_errata",
    "audit_corpus",
    "content_words",
    "read_errata",
]

MISSES = "evidence misses the answer"
DANGLING = "evidence id names no turn"
MAX_ERRATA_BYTES = 64 * 1024**2

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

    @property
    def key(self) -> tuple[str, int]:
        return (self.conversation, self.turn)

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Erratum:
    conversation: str
    turn: int
    evidence_turns: tuple[int, ...]
    reason: str
    source: str


@dataclass(frozen=True)
class Errata:
    path: str
    sha256: str
    source: str
    entries: dict[tuple[str, int], Erratum]


@dataclass
class Audit:
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
                "corrections": [asdict(e) | {"evidence_turns": list(e.evidence_turns)} for e in self.errata.entries.values()],
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


def _by_position(corpus: Corpus) -> dict[int, Conversation]:
    """Conversations by their position in the source: the importers name them ``NNN_…`` after it."""
    found = {}
    for conversation in corpus.conversations:
        position = whole_number(conversation.id.split("_", 1)[0])  # ASCII digits: '²' passes isdigit(), fails int()
        if position is not None:
            found[position] = conversation
    return found


def _locomo_ids(source: Source, corpus: Corpus) -> list[Flag]:
    flags = []
    conversations = _by_position(corpus)
    for position, sample in enumerate(source.items(source.data, "")):
        conversation = conversations.get(position)
        if conversation is None:
            raise EvalsError(f"{source.name}: [{position}] has no conversation {position:03d}_… in the corpus; give the file the corpus was imported from")
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
        for number, item in enumerate(source.items(source.get(sample, f"[{position}]", "qa", list), f"[{position}].qa")):
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
                flags.append(Flag(conversation.id, index, DANGLING, point.question, point.expected_fact, tuple(point.evidence_turns), ids=unresolved))
        if next_point != len(points):
            raise EvalsError(f"{source.name}: [{position}] does not match corpus conversation {conversation.id}; give the file the corpus was imported from")
    return flags


def _longmemeval_ids(source: Source, corpus: Corpus) -> list[Flag]:
    flags = []
    conversations = _by_position(corpus)
    for position, item in enumerate(source.items(source.data, "")):
        conversation = conversations.get(position)
        if conversation is None or not isinstance(item, dict):
            continue  # a question the importer skipped (an empty answer)
        ids = item.get("haystack_session_ids") or []
        sessions = item.get("haystack_sessions") or []
        with_turns = {i for i, s in zip(ids, sessions, strict=False) if isinstance(s, list) and s}
        unresolved = tuple(i for i in item.get("answer_session_ids") or [] if i not in with_turns)
        points = conversation.test_points()
        if unresolved and points:
            index, point = points[-1]
            flags.append(Flag(conversation.id, index, DANGLING, point.question, point.expected_fact, tuple(point.evidence_turns), ids=unresolved))
    return flags


def _source_flags(path: Path, corpus: Corpus) -> tuple[dict[str, str], list[Flag]]:
    try:
        source = Source(path)
    except ImportFormatError as exc:
        raise EvalsError(str(exc)) from None
    data = source.data
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "qa" in first:
        fmt, flags = "locomo", _locomo_ids(source, corpus)
    elif isinstance(first, dict) and "haystack_sessions" in first:
        fmt, flags = "longmemeval", _longmemeval_ids(source, corpus)
    else:
        raise EvalsError(f"{path}: neither LoCoMo's locomo10.json nor a LongMemEval file; --source takes the file the corpus was imported from")
    return {"path": str(path), "sha256": _sha256(path), "format": fmt}, flags


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


# -- errata ---------------------------------------------------------------------------------------------------


def _find_conversation(corpus: Corpus, name: str) -> Conversation | None:
    """By id, or by the name the importer kept after its ``NNN_`` prefix (LoCoMo's ``conv-26``), if only one has it."""
    exact = [c for c in corpus.conversations if c.id == name]
    if exact:
        return exact[0]
    named = [c for c in corpus.conversations if c.id.split("_", 1)[-1] == name]
    return named[0] if len(named) == 1 else None


def read_errata(path: Path, corpus: Corpus) -> Errata:
    """Read and check an errata file against ``corpus``; an EvalsError names the file and the JSON path.

    The file is ``{"source": …, "errata": [{"conversation", "turn" or "question", "evidence_turns",
    "reason", "source"?}]}``: a test point (its conversation's id, or the benchmark's own name for it,
    and its turn index or its exact question), its corrected evidence turns (earlier recorded turns),
    why, and where the correction comes from (default: the file's source)."""
    path = Path(path)
    name = str(path)
    data = jsonfile.load(path, MAX_ERRATA_BYTES)

    def fail(where: str, message: str) -> EvalsError:
        return EvalsError(f"{name}: {where}: {message}")

    if not isinstance(data, dict):
        raise fail("(top level)", "expected an object with \"source\" and \"errata\"")
    source = data.get("source")
    if not isinstance(source, str) or not source.strip():
        raise fail("source", "expected a non-empty string: where these corrections come from")
    items = data.get("errata")
    if not isinstance(items, list):
        raise fail("errata", "expected an array of corrections")
    unknown = sorted(set(data) - {"source", "errata"})
    if unknown:
        raise fail(unknown[0], "unknown field")
    entries: dict[tuple[str, int], Erratum] = {}
    for number, item in enumerate(items):
        where = f"errata[{number}]"
        if not isinstance(item, dict):
            raise fail(where, "expected an object")
        extra = sorted(set(item) - {"conversation", "turn", "question", "evidence_turns", "reason", "source"})
        if extra:
            raise fail(f"{where}.{extra[0]}", "unknown field")
        wanted = item.get("conversation")
        conversation = _find_conversation(corpus, wanted) if isinstance(wanted, str) else None
        if conversation is None:
            raise fail(f"{where}.conversation", f"{wanted!r} names no conversation of the corpus (or more than one)")
        index = _test_point(conversation, item, lambda field, message: fail(f"{where}.{field}", message))
        turns = item.get("evidence_turns")
        if not isinstance(turns, list) or not turns or not all(type(t) is int for t in turns):
            raise fail(f"{where}.evidence_turns", "expected a non-empty array of turn indexes")
        for position, turn in enumerate(turns):
            if not 0 <= turn < index or not conversation.turns[turn].record:
                raise fail(f"{where}.evidence_turns[{position}]", f"turn {turn} is not an earlier recorded turn of {conversation.id}")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise fail(f"{where}.reason", "expected a non-empty string: why the label is wrong")
        own = item.get("source", source)
        if not isinstance(own, str) or not own.strip():
            raise fail(f"{where}.source", "expected a non-empty string")
        key = (conversation.id, index)
        if key in entries:
            raise fail(where, f"a second correction of {conversation.id} turn {index}")
        entries[key] = Erratum(conversation.id, index, tuple(sorted(set(turns))), reason, own)
    return Errata(name, _sha256(path), source, entries)


def _test_point(conversation: Conversation, item: dict[str, Any], fail) -> int:
    """The turn index of the test point an erratum names, by ``turn`` or by its exact ``question``."""
    if "turn" in item:
        turn = item["turn"]
        if type(turn) is not int or not 0 <= turn < len(conversation.turns) or conversation.turns[turn].test_at is None:
            raise fail("turn", f"{turn!r} is not the turn of a test point in {conversation.id}")
        return turn
    question = item.get("question")
    found = [i for i, point in conversation.test_points() if point.question == question]
    if len(found) != 1:
        raise fail("question", f"{question!r} is {'no' if not found else 'more than one'} test point's question in {conversation.id}; give \"turn\"")
    return found[0]


def apply_errata(corpus: Corpus, errata: Errata) -> Corpus:
    """A copy of ``corpus`` with each erratum's evidence turns (and their sessions) in place of the published ones.
    A figure from it is labelled "with errata" and kept apart from the published one."""
    conversations = []
    for conversation in corpus.conversations:
        turns = list(conversation.turns)
        for (cid, index), erratum in errata.entries.items():
            if cid != conversation.id:
                continue
            point = turns[index].test_at
            assert point is not None
            sessions = list(dict.fromkeys(s for t in erratum.evidence_turns if (s := turns[t].session) is not None))
            point = point.model_copy(update={"evidence_turns": list(erratum.evidence_turns), "evidence_sessions": sessions})
            turns[index] = turns[index].model_copy(update={"test_at": point})
        conversations.append(conversation.model_copy(update={"turns": turns}))
    return replace(corpus, conversations=conversations)


# -- the whole audit ---------------------------------------------------------------------------------------------


def audit_corpus(corpus: Corpus, *, source: Path | None = None, errata: Path | None = None) -> Audit:
    """Run both rules over ``corpus`` (ids only with ``source``), and again with ``errata`` applied."""
    points = sum(len(c.test_points()) for c in corpus.conversations)
    checked, flags = _content_flags(corpus.conversations)
    audit = Audit(corpus.name, corpus.digest, points, checked, flags)
    if source is not None:
        audit.source, dangling = _source_flags(Path(source), corpus)
        audit.flags = sorted([*flags, *dangling], key=lambda f: (f.conversation, f.turn, f.kind))
    else:
        audit.notes.append("evidence ids not checked: give --source, the benchmark file the corpus was imported from")
    if errata is not None:
        audit.errata = read_errata(Path(errata), corpus)
        _, corrected = _content_flags(apply_errata(corpus, audit.errata).conversations)
        # A corrected test point no longer rests on the published ids.
        kept = [f for f in audit.flags if f.kind == DANGLING and f.key not in audit.errata.entries]
        audit.flags_with_errata = sorted([*corrected, *kept], key=lambda f: (f.conversation, f.turn, f.kind))
    return audit
