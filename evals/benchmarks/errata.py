"""The errata file format: test point -> corrected evidence turns, a corrected answer, or the question left out as
invalid, each with a reason and a source; read, checked against a corpus, and applied.

An errata file is checked against the corpus, recorded by its source and SHA-256, and gives a second figure "with
errata" beside the one "as published": :func:`apply_errata` makes the corrected corpus (for `evals audit-labels`),
and :mod:`evals.analysis.errata` a run's headline "with errata" from the store, each apart from the published one,
never mixed.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from evals.errors import EvalsError
from evals.io import jsonfile
from evals.model.corpus import Corpus

__all__ = [
    "MAX_ERRATA_BYTES",
    "Errata",
    "ErrataFile",
    "ErrataTarget",
    "Erratum",
    "TargetConversation",
    "apply_errata",
    "check_errata_document",
    "corrected_fields",
    "parse_errata",
    "read_errata",
    "resolve_errata",
    "target_of",
]

MAX_ERRATA_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class Erratum:
    """One test point's correction. Each field left None keeps what the corpus publishes."""

    conversation: str
    turn: int
    reason: str
    source: str
    evidence_turns: tuple[int, ...] | None = None  # the corrected evidence turns
    expected_fact: str | None = None  # the corrected answer
    expected_keywords: tuple[str, ...] | None = None  # its keywords (a corrected answer alone clears them)
    exclude: bool = False  # the question is invalid: left out of the figure with errata
    id: str | None = None  # the source's own name for the entry (locomo-audit's "locomo_0_qa1")
    kind: str | None = None  # the source's classification of the error (locomo-audit's "WRONG_CITATION")

    @property
    def corrects_evidence(self) -> bool:
        return self.evidence_turns is not None or self.exclude

    @property
    def corrects_answer(self) -> bool:
        return self.expected_fact is not None or self.expected_keywords is not None

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Errata:
    """An errata file, checked against one corpus: recorded by its path, SHA-256, source and origin."""

    path: str
    sha256: str
    source: str
    entries: dict[tuple[str, int], Erratum]
    benchmark: str | None = None  # the benchmark it corrects; a corpus declaring another is never matched
    origin: dict[str, Any] | None = None  # where it was converted from (repository, commit, files and digests)

    @property
    def excluded(self) -> int:
        return sum(e.exclude for e in self.entries.values())

    def describe(self) -> str:
        """One line: how many corrections, from where, recorded how."""
        excluded = f", {self.excluded} excluded" if self.excluded else ""
        count = len(self.entries)
        return f"{count} correction{'s' if count != 1 else ''}{excluded} from {self.source} ({self.path}, sha256 {self.sha256})"

    def record(self) -> dict[str, Any]:
        """What a figure with these errata is recorded by (JSON-ready): the file, its digest, source and origin."""
        return {
            "path": self.path,
            "sha256": self.sha256,
            "source": self.source,
            "benchmark": self.benchmark,
            "origin": self.origin,
            "corrections": len(self.entries),
            "excluded": self.excluded,
        }


# -- errata ---------------------------------------------------------------------------------------------------
#
# An errata file is checked against an ErrataTarget: what the checks need of a corpus (conversation ids, turn
# counts, unrecorded turns, each test point's question), made from a corpus folder (here) or from a store's
# copy of a corpus (evals.analysis.errata), so the same file gives the same corrections on either.

_TOP_FIELDS = ("source", "errata", "benchmark", "origin")
_ENTRY_FIELDS = (
    "conversation", "turn", "question", "evidence_turns", "expected_fact", "expected_keywords", "exclude", "reason",
    "source", "id", "kind",
)  # fmt: skip
_CORRECTIONS = ("evidence_turns", "expected_fact", "expected_keywords", "exclude")


@dataclass(frozen=True)
class TargetConversation:
    id: str
    turn_count: int
    unrecorded: frozenset[int]
    questions: dict[int, str]  # each test point's turn -> its question, in turn order


@dataclass(frozen=True)
class ErrataTarget:
    """What an errata file is checked against: one corpus's conversations (see :func:`target_of`)."""

    conversations: tuple[TargetConversation, ...]

    def find(self, name: str) -> TargetConversation | None:
        """By id, or by the name the importer kept after its ``NNN_`` prefix (LoCoMo's ``conv-26``), if only one has it."""
        exact = [c for c in self.conversations if c.id == name]
        if exact:
            return exact[0]
        named = [c for c in self.conversations if c.id.split("_", 1)[-1] == name]
        return named[0] if len(named) == 1 else None


def target_of(corpus: Corpus) -> ErrataTarget:
    return ErrataTarget(
        tuple(
            TargetConversation(
                c.id,
                len(c.turns),
                frozenset(i for i, turn in enumerate(c.turns) if not turn.record),
                {i: point.question for i, point in c.test_points()},
            )
            for c in corpus.conversations
        )
    )


@dataclass(frozen=True)
class ErrataFile:
    """An errata file read and checked in itself (fields and types), before it is checked against a corpus."""

    path: str
    sha256: str
    source: str
    items: list[dict[str, Any]]
    benchmark: str | None = None
    origin: dict[str, Any] | None = None

    def fail(self, where: str, message: str) -> EvalsError:
        return EvalsError(f"{self.path}: {where}: {message}")

    def conversations(self) -> list[str]:
        """The conversation each entry names, in file order."""
        return [item["conversation"] for item in self.items]


def parse_errata(path: Path) -> ErrataFile:
    """Read an errata file and check its shape; an EvalsError names the file and the JSON path.

    The file is ``{"source": …, "benchmark"?: …, "origin"?: {…}, "errata": [entry, …]}``. An entry names a
    test point (``conversation``: its id, or the benchmark's own name for it; ``turn`` and/or its exact
    ``question``), says what is wrong with it (at least one of ``evidence_turns``, ``expected_fact``,
    ``expected_keywords``, or ``exclude: true`` for a question that is invalid), why (``reason``) and,
    optionally, where that comes from (``source``, default the file's), the source's own ``id`` and ``kind``."""
    path = Path(path)
    name = str(path)
    data = jsonfile.read_bytes(path, MAX_ERRATA_BYTES)
    document = jsonfile.parse(data, name)
    check_errata_document(document, name)
    digest = hashlib.sha256(data).hexdigest()
    return ErrataFile(name, digest, document["source"], document["errata"], document.get("benchmark"), document.get("origin"))


def check_errata_document(data: Any, name: str) -> None:
    """Check an errata file's content (parsed JSON), as :func:`parse_errata` reads it; an EvalsError names
    ``name`` and the JSON path. :mod:`evals.benchmarks.locomo.errata` checks what it writes with it."""

    def fail(where: str, message: str) -> EvalsError:
        return EvalsError(f"{name}: {where}: {message}")

    if not isinstance(data, dict):
        raise fail("(top level)", 'expected an object with "source" and "errata"')
    unknown = sorted(set(data) - set(_TOP_FIELDS))
    if unknown:
        raise fail(unknown[0], f"unknown field (an errata file has {', '.join(_TOP_FIELDS)})")
    if not _text(data.get("source")):
        raise fail("source", "expected a non-empty string: where these corrections come from")
    benchmark = data.get("benchmark")
    if benchmark is not None and not _text(benchmark):
        raise fail("benchmark", "expected the name of the benchmark corrected (as its benchmark.json declares it)")
    origin = data.get("origin")
    if origin is not None and not isinstance(origin, dict):
        raise fail("origin", "expected an object (repository, commit, files and their digests)")
    items = data.get("errata")
    if not isinstance(items, list) or not items:
        raise fail("errata", "expected a non-empty array of corrections")
    for number, item in enumerate(items):
        _check_entry(item, f"errata[{number}]", fail)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_entry(item: Any, where: str, fail) -> None:
    """The fields of one entry, on their own (what they name is checked against a corpus later)."""
    if not isinstance(item, dict):
        raise fail(where, "expected an object")
    extra = sorted(set(item) - set(_ENTRY_FIELDS))
    if extra:
        raise fail(f"{where}.{extra[0]}", "unknown field")
    if not _text(item.get("conversation")):
        raise fail(f"{where}.conversation", "expected the conversation's id (or the benchmark's name for it)")
    if "turn" not in item and "question" not in item:
        raise fail(where, 'names no test point: give "turn" or "question"')
    if "turn" in item and type(item["turn"]) is not int:
        raise fail(f"{where}.turn", "expected a turn index")
    if "question" in item and not isinstance(item["question"], str):
        raise fail(f"{where}.question", "expected the test point's exact question")
    if "exclude" in item and type(item["exclude"]) is not bool:
        raise fail(f"{where}.exclude", "expected true or false")
    if not any(name in item for name in _CORRECTIONS[:-1]) and item.get("exclude") is not True:
        raise fail(where, f"corrects nothing: give {', '.join(_CORRECTIONS[:-1])} or exclude: true")
    if "exclude" in item:
        if item["exclude"] and (mixed := [n for n in _CORRECTIONS[:-1] if n in item]):
            raise fail(f"{where}.{mixed[0]}", "an excluded test point takes no correction (it leaves the figure)")
    turns = item.get("evidence_turns", [0])
    if not isinstance(turns, list) or not turns or not all(type(t) is int for t in turns):
        raise fail(f"{where}.evidence_turns", "expected a non-empty array of turn indexes")
    if "expected_fact" in item and not _text(item["expected_fact"]):
        raise fail(f"{where}.expected_fact", "expected the corrected answer, a non-empty string")
    keywords = item.get("expected_keywords", [])
    if not isinstance(keywords, list) or not all(_text(k) for k in keywords):
        raise fail(f"{where}.expected_keywords", "expected an array of non-empty strings")
    if not _text(item.get("reason")):
        raise fail(f"{where}.reason", "expected a non-empty string: why the label is wrong")
    for name in ("source", "id", "kind"):
        if name in item and not _text(item[name]):
            raise fail(f"{where}.{name}", "expected a non-empty string")


def resolve_errata(errata: ErrataFile, target: ErrataTarget) -> Errata:
    """Check each entry of ``errata`` against a corpus (``target``): the conversation and test point it names,
    and that corrected evidence turns are earlier recorded turns; an EvalsError names the file and the JSON path."""
    entries: dict[tuple[str, int], Erratum] = {}
    for number, item in enumerate(errata.items):
        where = f"errata[{number}]"
        wanted = item["conversation"]
        conversation = target.find(wanted)
        if conversation is None:
            raise errata.fail(f"{where}.conversation", f"{wanted!r} names no conversation of the corpus (or more than one)")
        index = _test_point(conversation, item, lambda field, message, where=where: errata.fail(f"{where}.{field}", message))
        turns = item.get("evidence_turns")
        for position, turn in enumerate(turns or ()):
            if not 0 <= turn < index or turn in conversation.unrecorded:
                raise errata.fail(
                    f"{where}.evidence_turns[{position}]", f"turn {turn} is not an earlier recorded turn of {conversation.id}"
                )
        key = (conversation.id, index)
        if key in entries:
            raise errata.fail(where, f"a second correction of {conversation.id} turn {index}")
        keywords = item.get("expected_keywords")
        entries[key] = Erratum(
            conversation.id,
            index,
            item["reason"],
            item.get("source", errata.source),
            evidence_turns=None if turns is None else tuple(sorted(set(turns))),
            expected_fact=item.get("expected_fact"),
            # A corrected answer without keywords is matched whole: its published keywords were the wrong answer's.
            expected_keywords=tuple(keywords) if keywords is not None else (() if "expected_fact" in item else None),
            exclude=item.get("exclude", False),
            id=item.get("id"),
            kind=item.get("kind"),
        )
    return Errata(errata.path, errata.sha256, errata.source, entries, errata.benchmark, errata.origin)


def read_errata(path: Path, corpus: Corpus | ErrataTarget) -> Errata:
    """Read an errata file and check it against ``corpus`` (:func:`parse_errata`, :func:`resolve_errata`)."""
    return resolve_errata(parse_errata(path), corpus if isinstance(corpus, ErrataTarget) else target_of(corpus))


def _test_point(conversation: TargetConversation, item: dict[str, Any], fail) -> int:
    """The turn index of the test point an erratum names, by ``turn`` or by its exact ``question`` (both: they must agree)."""
    question = item.get("question")
    if "turn" in item:
        turn = item["turn"]
        if turn not in conversation.questions:
            raise fail("turn", f"{turn!r} is not the turn of a test point in {conversation.id}")
        if question is not None and conversation.questions[turn] != question:
            raise fail("question", f"is not the question at turn {turn} of {conversation.id} ({conversation.questions[turn]!r})")
        return turn
    found = [i for i, asked in conversation.questions.items() if asked == question]
    if len(found) != 1:
        raise fail(
            "question",
            f'{question!r} is {"no" if not found else "more than one"} test point\'s question in {conversation.id}; give "turn"',
        )
    return found[0]


def apply_errata(corpus: Corpus, errata: Errata) -> Corpus:
    """A copy of ``corpus`` with each erratum applied: corrected evidence turns (and their sessions), answer and
    keywords in place of the published ones, and an excluded test point no longer a test point. A figure from it
    is labelled "with errata" and kept apart from the published one."""
    conversations = []
    for conversation in corpus.conversations:
        turns = list(conversation.turns)
        for (cid, index), erratum in errata.entries.items():
            if cid != conversation.id:
                continue
            point = turns[index].test_at
            assert point is not None
            if erratum.exclude:
                turns[index] = turns[index].model_copy(update={"test_at": None})
                continue
            fields = corrected_fields(erratum, [t.session for t in turns])
            turns[index] = turns[index].model_copy(update={"test_at": point.model_copy(update=fields)})
        conversations.append(conversation.model_copy(update={"turns": turns}))
    return replace(corpus, conversations=conversations)


def corrected_fields(erratum: Erratum, sessions: list[str | None]) -> dict[str, Any]:
    """The test point fields an erratum replaces (its evidence sessions become those of its corrected turns)."""
    fields: dict[str, Any] = {}
    if erratum.evidence_turns is not None:
        fields["evidence_turns"] = list(erratum.evidence_turns)
        fields["evidence_sessions"] = list(dict.fromkeys(s for t in erratum.evidence_turns if (s := sessions[t]) is not None))
    if erratum.expected_fact is not None:
        fields["expected_fact"] = erratum.expected_fact
    if erratum.expected_keywords is not None:
        fields["expected_keywords"] = list(erratum.expected_keywords)
    return fields
