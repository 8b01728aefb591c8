"""LoCoMo (snap-research/locomo, ``data/locomo10.json`` or ``data/locomo10.zip``) -> a schema-"1" corpus.

Three layouts are read, and the same conversation imports identically from each:

- ``locomo10.json``: a JSON array of conversations, each ``{sample_id?,
  conversation, qa}``;
- a zip archive holding that file as its only ``.json`` member;
- a zip archive with one ``.json`` member per conversation, as the repository's
  ``data/locomo10.zip`` holds them (``data/multimodal_dialog/locomo10_v2/26.json``,
  …): each member is one object with the ``conversation`` fields and ``qa`` at its
  top level, and no sample id. A member named ``26.json`` gets the sample id
  ``conv-26`` (the one locomo10.json gives that conversation; a stem that is not
  a number is the id as it is); members go in natural order of their names
  (``2.json`` before ``10.json``). Errors name ``archive.zip!member``.

``conversation`` holds ``speaker_a``, ``speaker_b`` and sessions
``session_N`` (lists of ``{speaker, dia_id, text, blip_caption?}``) with
``session_N_date_time``; ``qa`` is a list of ``{question, answer, evidence:
[dia_id], category}``. Other fields (``events_session_N``,
``session_N_observation``, ``session_N_summary``) are not read.

One corpus conversation per LoCoMo conversation: the sessions' turns in order
(session_1, session_2, …; their dates go in the description), then one turn per
question, each with ``record: false`` so that every question sees the history
alone and never another question. A turn's content is ``"Speaker: text"``, plus
``" [shares <caption>]"`` where the turn shared an image (the caption is all
the text the image leaves). speaker_a's turns get role ``user``, the others
``assistant``.

Categories are kept as ``"<number> <name>"``. The numbering is not documented
in the LoCoMo paper or README; the names follow the comments in the official
evaluation code (``task_eval/evaluation.py``) and snap-research/locomo issue
#29: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
Other projects have used other names for 1 and 3, hence the number in front.
Category 5 questions have no answer in the conversation (their items carry an
``adversarial_answer`` instead): they are ``answerable: false``.

Evidence ids (``"D3:5"``) become evidence turns through the turns' own
``dia_id`` fields. The published file has a few ids that name no turn (and a
few entries holding several ids in one string): every id found in an entry is
used, ids that name no turn are skipped and counted in the report.

Each history turn's ``session`` is the key of its session as the file writes
it (``"session_3"``), and its ``date`` is that session's
``session_3_date_time`` verbatim (``"1:56 pm on 8 May, 2023"``), when given.
A question's ``evidence_sessions`` are the sessions of its evidence turns, in
conversation order; the questions themselves belong to no session.

The folder also gets ``references.json`` with the paper's dialog-level
retrieval recall (:data:`REFERENCES`), to show beside runs on this corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from evals.benchmarks.kit import (
    ANSWER_KINDS,
    Archive,
    ImportReport,
    Reference,
    Source,
    answer_keywords,
    answer_text,
    build,
    conversation_id,
    question_turn,
    session_ids,
    write_corpus,
)
from evals.benchmarks.locomo import CATEGORY_NAMES, UNANSWERABLE_CATEGORY  # declared once, in the unit

__all__ = ["CATEGORY_NAMES", "REFERENCES", "import_locomo"]

# Maharana et al. (2024), Table 3: retrieval over dialog turns with the DRAGON retriever, "overall"
# (adversarial questions included). Their recall is the fraction of a question's evidence found.
REFERENCES = [
    Reference(
        label="LoCoMo paper, DRAGON retriever (dialog level)",
        citation="Maharana et al. 2024, Evaluating Very Long-Term Conversational Memory of LLM Agents, Table 3",
        metric="recall_frac",
        level="turn",
        k=k,
        value=value,
        note="computed by the authors on their release (all questions, adversarial included), not re-run here",
    )
    for k, value in ((5, 0.588), (10, 0.675), (25, 0.799), (50, 0.848))
]


_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\d+:\d+")


def _sessions(source: Source, conversation: dict[str, Any], path: str) -> list[tuple[int, str, list[Any], str | None]]:
    """(number, key, turns, date) of each session, in session order."""
    found = []
    for key, value in conversation.items():
        match = _SESSION.fullmatch(key)
        if match:
            date = source.get(conversation, path, f"{key}_date_time", str, required=False)
            found.append((int(match.group(1)), key, source.items(value, _at(path, key)), date))
    if not found:
        raise source.fail(path, "no session_N lists; expected LoCoMo's conversation object")
    return sorted(found, key=lambda s: s[0])


def _category(source: Source, item: dict[str, Any], path: str) -> tuple[str, bool]:
    number = source.get(item, path, "category", int)
    name = CATEGORY_NAMES.get(number)
    label = f"{number} {name}" if name else str(number)
    return label, number != UNANSWERABLE_CATEGORY


@dataclass
class _Sample:
    """Where one LoCoMo conversation's parts sit in its document, so that errors name their JSON paths."""

    source: Source
    path: str  # of the object holding "qa": "[3]" in locomo10.json, "" (top level) in a file of its own
    holder: dict[str, Any]
    conversation: dict[str, Any]  # speaker_a, speaker_b, session_N, session_N_date_time
    conversation_path: str
    name: str | None  # the sample id; None when the file gives none
    member: str | None = None  # the archive member holding it, named in notes (errors name it through source)


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _in_array(source: Source, sample: Any, position: int) -> _Sample:
    """Sample ``position`` of locomo10.json: ``{sample_id?, conversation, qa}``."""
    path = f"[{position}]"
    conversation = source.get(sample, path, "conversation", dict)
    sample_id = source.get(sample, path, "sample_id", (str, int), required=False)
    name = None if sample_id is None else str(sample_id)
    return _Sample(source, path, sample, conversation, f"{path}.conversation", name)


def _in_member(member: str, source: Source) -> _Sample:
    """An archive member that is one conversation: its fields and ``qa`` at top level, no sample id.
    A numeric stem ``26`` names it ``conv-26``, the sample id locomo10.json gives the same conversation."""
    if not isinstance(source.data, dict):
        raise source.fail("", "expected one LoCoMo conversation object (speaker_a, session_N, …, qa)")
    stem = PurePosixPath(member).stem
    name = f"conv-{stem}" if stem.isdigit() else stem
    return _Sample(source, "", source.data, source.data, "", name, member)


def _conversation(sample: _Sample, position: int, report: ImportReport) -> dict[str, Any]:
    source, path, conversation = sample.source, sample.path, sample.conversation
    speaker_a = source.get(conversation, sample.conversation_path, "speaker_a", str, required=False)
    turns: list[dict[str, Any]] = []
    turn_of: dict[str, int] = {}
    dates = []
    for number, key, session, date in _sessions(source, conversation, sample.conversation_path):
        dates.append(f"session {number}: {date}" if date else f"session {number}")
        date = date if date and date.strip() else None  # a blank date says nothing
        for index, turn in enumerate(session):
            where = f"{_at(sample.conversation_path, key)}[{index}]"
            speaker = source.get(turn, where, "speaker", str)
            text = source.get(turn, where, "text", str)
            dia_id = source.get(turn, where, "dia_id", str)
            caption = source.get(turn, where, "blip_caption", str, required=False)
            content = f"{speaker}: {text}" + (f" [shares {caption}]" if caption else "")
            turn_of.setdefault(dia_id, len(turns))
            role = "user" if speaker_a is None or speaker == speaker_a else "assistant"
            turns.append({"role": role, "content": content, "session": key, "date": date})
    if not turns:
        raise source.fail(sample.conversation_path, "the sessions hold no turns")
    qa_path = _at(path, "qa")
    qa = source.items(source.get(sample.holder, path, "qa", list), qa_path)

    unresolved = 0
    for index, item in enumerate(qa):
        where = f"{qa_path}[{index}]"
        question = source.get(item, where, "question", str)
        category, answerable = _category(source, item, where)
        evidence_ids = source.items(source.get(item, where, "evidence", list, required=False) or [], f"{where}.evidence")
        evidence: list[int] = []
        for position_in_list, entry in enumerate(evidence_ids):
            if not isinstance(entry, str):
                raise source.fail(
                    f"{where}.evidence[{position_in_list}]",
                    f'expected a dia_id string such as "D3:5", got {type(entry).__name__}',
                )
            for dia_id in _DIA_ID.findall(entry) or [entry]:
                turn = turn_of.get(dia_id)
                if turn is None:
                    unresolved += 1
                elif turn not in evidence:
                    evidence.append(turn)
        evidence.sort()
        sessions, _ = session_ids(turns, [turns[t]["session"] for t in evidence], len(turns))
        if answerable:
            answer = answer_text(source.get(item, where, "answer", ANSWER_KINDS))
            if not answer:  # an empty expected fact would match any record
                report.notes.append(f"{_noted(sample, where)}: the answer is empty (question skipped)")
                continue
            keywords = answer_keywords(answer, "\n".join(turns[t]["content"] for t in evidence))
            # The published prompts put the answer in as the file writes it (conv-30's ' 23 July, 2023' keeps its
            # leading space in mem0's judge prompt): a text answer is kept as written, its whitespace included.
            raw = item.get("answer") if isinstance(item, dict) else None
            fact = raw if isinstance(raw, str) and raw.strip() == answer else answer
        else:
            adversarial = item.get("adversarial_answer") if isinstance(item, dict) else None
            fact = "no answer in the conversation" + (f" (adversarial answer: {answer_text(adversarial)})" if adversarial else "")
            keywords = []
        turns.append(
            question_turn(
                report,
                question,
                fact=fact,
                keywords=keywords,
                evidence=evidence,
                category=category,
                answerable=answerable,
                sessions=sessions,
            )
        )
    if unresolved:
        report.notes.append(
            f"{_by_id(sample, sample.member or path)}: {unresolved} evidence id{'' if unresolved == 1 else 's'} "
            f"{'names' if unresolved == 1 else 'name'} no turn (skipped)"
        )

    name = sample.name if sample.name is not None else f"locomo-{position}"
    speakers = " and ".join(s for s in (speaker_a, conversation.get("speaker_b")) if isinstance(s, str))
    return {
        "id": conversation_id(position, name, report, "sample id"),
        "description": f"LoCoMo {name}{': ' + speakers if speakers else ''}; {len(qa)} questions after the history; "
        + "; ".join(dates),
        "turns": turns,
    }


def _noted(sample: _Sample, path: str) -> str:
    """Where a note is: the conversation by its sample id (``conv-26``) where it has one, then the JSON path,
    after the member's name when the sample is an archive member."""
    return _by_id(sample, f"{sample.member}: {path or '(top level)'}" if sample.member else path)


def _by_id(sample: _Sample, where: str) -> str:
    """``conv-26 ([3])``: a conversation named by LoCoMo's sample id, then where it is in the input."""
    return f"{sample.name} ({where})" if sample.name is not None else where


def _samples(file: Path) -> Iterator[_Sample]:
    """The conversations of ``file`` in order, read one at a time: locomo10.json's array (also as the
    one .json file of a zip archive), or a zip archive of one conversation per .json file, in numeric
    order of the file names."""
    archive = Archive.open(file)
    if archive is None:
        with Source.open(file) as source:
            yield from _in_array_of(source)
        return
    with closing(archive):
        if len(archive.members) == 1:
            with archive.source(archive.members[0]) as source:
                if source.is_array:  # locomo10.json, zipped
                    yield from _in_array_of(source)
                    return
                yield _in_member(archive.members[0], source)
                return
        for member in archive.members:
            with archive.source(member) as source:
                yield _in_member(member, source)


def _in_array_of(source: Source) -> Iterator[_Sample]:
    if not source.is_array:
        source.data  # noqa: B018 - a file that is not JSON at all says so first
        raise source.fail("", "expected a JSON array of LoCoMo conversations (as in data/locomo10.json)")
    for position, sample in enumerate(source.elements()):
        yield _in_array(source, sample, position)


def import_locomo(file: Path, out: Path) -> ImportReport:
    """Read a LoCoMo file and write its corpus into ``out``; return the counts. One conversation
    at a time: each is read, made, written and let go before the next is read."""
    report = ImportReport(source=str(file), out=Path(out))
    conversations = (
        build(sample.source, sample.path, _conversation(sample, position, report))
        for position, sample in enumerate(_samples(file))
    )
    report.conversations = write_corpus(conversations, out, REFERENCES, benchmark="locomo")
    return report
