"""BEAM (mohammadtavakoli78/BEAM, one tier's folder such as ``chats/100K``) -> a schema-"1" corpus.

The input is a folder holding one numbered folder per conversation (``1/``, ``2/``, …), read in numeric
order, as BEAM's ``src/answer_probing_questions/answer_generation.py`` (``batch_run_answer_generation``)
lists them. In each, the chat is ``chat_trunecated.json`` where present, else ``chat.json`` (the same
choice that code makes), and the questions are ``probing_questions/probing_questions.json``.

A chat is a JSON array of batches ``{batch_number, time_anchor, turns: [[message, …], …]}``, each message
``{role, id, content, time_anchor?, …}``. The 10M tier's chat is an array of plans instead, each a
one-key object ``{"plan-N": [batch, …]}``, read plan by plan and batch by batch as
``long_term_memory_methods.py`` (``probing_question_evaluation``) reads it when ``chat_size == "10M"``.
Messages become turns in that order, so turn *i* is the *i*-th message BEAM feeds a model; its ``content``
is the message's verbatim, its ``session`` the batch (``"batch 3"``, ``"plan-2 batch 3"`` on 10M), its
``date`` the message's own ``time_anchor`` verbatim where it has one (``"March-15-2024"``), else the
batch's.

BEAM's message ids are positions: in every chat of the snapshot that could be read, message *i* has id
*i*, so a turn's index is its BEAM id. An evidence id is resolved by the message ``id`` fields when they
are distinct within the conversation, else (the 10M tier's plan parts number each plan from 0) by
position in the order above; which was used is said in the report.

``probing_questions.json`` is an object: ability -> list of questions, read in its key order (as BEAM's
answer generation iterates it). The ten abilities are the categories. Each question becomes a turn after
the history with ``record: false``; its expected fact is the first of ``answer``, ``ideal_answer``,
``ideal_response``, ``ideal_summary`` and ``expected_compliance`` it holds. Its evidence is
``source_chat_ids`` in every shape BEAM writes: a list of ids, a dict of such lists
(``{"original_info": [86], "updated_info": [114]}``), or lists nested in a list
(``[[24, 26], [146]]``); every integer found is an id. An id that names no message (or an entry that is
no id, such as ``"--"``) is never dropped in silence: it is counted in the report and in the
conversation's description. Abstention questions are ``answerable: false`` (BEAM writes no
``source_chat_ids`` for them). Its ``rubric`` (the criteria BEAM's judge checks an answer against, one request
each: ``--protocol beam``) is kept as the test point's ``rubric``, in order; a question without one has none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.benchmarks.kit import (
    Conversation,
    ImportFormatError,
    ImportReport,
    Source,
    answer_keywords,
    answer_text,
    build,
    conversation_id,
    question_turn,
    session_ids,
    write_corpus,
)

__all__ = ["ABSTENTION", "BeamCounts", "chat_file", "evidence_ids", "import_beam"]

ABSTENTION = "abstention"
CHAT_TRUNCATED = "chat_trunecated.json"  # BEAM's own spelling
CHAT = "chat.json"
QUESTIONS = "probing_questions/probing_questions.json"
_FACT_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
_PLAN = re.compile(r"plan-\d+")


def chat_file(folder: Path) -> Path:
    """The chat BEAM's answer generation reads in a conversation's folder."""
    truncated = folder / CHAT_TRUNCATED
    return truncated if truncated.is_file() else folder / CHAT


def conversation_folders(root: Path) -> list[Path]:
    """The numbered conversation folders of a tier, in numeric order (as BEAM sorts them); an ImportFormatError for a
    folder whose name Python calls digits but that is no number (``²``, ``٣``)."""
    folders = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()]
    odd = sorted(p.name for p in folders if not (p.name.isascii() and p.name.isdecimal()))
    if odd:
        raise ImportFormatError(
            f"{root}: the folder {odd[0]!r} is named like a number but is not one of ASCII digits; "
            "BEAM's conversation folders are 1/, 2/, …: rename or remove it"
        )
    return sorted(folders, key=lambda p: int(p.name))


def evidence_ids(value: Any) -> tuple[list[int], list[Any]]:
    """The message ids in a ``source_chat_ids`` value of any shape (list, dict of lists, nested lists), in the
    order written, each once; and the entries that are no id (a string such as ``"--"``)."""
    ids: list[int] = []
    odd: list[Any] = []

    def walk(item: Any) -> None:
        if isinstance(item, bool):
            odd.append(item)
        elif isinstance(item, int):
            if item not in ids:
                ids.append(item)
        elif isinstance(item, list):
            for part in item:
                walk(part)
        elif isinstance(item, dict):
            for part in item.values():
                walk(part)
        elif item is not None:
            odd.append(item)

    walk(value)
    return ids, odd


@dataclass
class BeamCounts:
    """What the import found of BEAM's evidence, per ability: questions, those with evidence, dangling ids."""

    questions: dict[str, int] = field(default_factory=dict)
    with_evidence: dict[str, int] = field(default_factory=dict)
    dangling: dict[str, int] = field(default_factory=dict)  # ids naming no message, and entries that are no id
    by_position: int = 0  # conversations whose ids were resolved by position (ids repeat)

    def add(self, ability: str, evidence: bool, dangling: int) -> None:
        self.questions[ability] = self.questions.get(ability, 0) + 1
        self.with_evidence[ability] = self.with_evidence.get(ability, 0) + evidence
        self.dangling[ability] = self.dangling.get(ability, 0) + dangling


def _messages(source: Source) -> Iterator[tuple[str, int, dict[str, Any], str | None, str]]:
    """(session, position, message, batch anchor, JSON path) of every message, in BEAM's reading order."""
    if not source.is_array:
        source.data  # noqa: B018 - a file that is not JSON at all says so first
        raise source.fail("", "expected a JSON array of batches (or, on the 10M tier, of plans)")
    for position, element in enumerate(source.elements()):
        where = f"[{position}]"
        if isinstance(element, dict) and len(element) == 1 and "turns" not in element:
            ((plan, batches),) = element.items()
            for number, batch in enumerate(source.items(batches, f"{where}.{plan}")):
                yield from _batch(source, batch, f"{where}.{plan}[{number}]", f"{plan} ")
        else:
            yield from _batch(source, element, where, "")


def _batch(source: Source, batch: Any, where: str, prefix: str) -> Iterator[tuple[str, int, dict[str, Any], str | None, str]]:
    number = source.get(batch, where, "batch_number", (int, str), required=False)
    anchor = source.get(batch, where, "time_anchor", str, required=False)
    session = f"{prefix}batch {number}" if number is not None else f"{prefix}batch at {where}"
    for t, turn in enumerate(source.items(source.get(batch, where, "turns", list), f"{where}.turns")):
        for m, message in enumerate(source.items(turn, f"{where}.turns[{t}]")):
            yield session, m, message, anchor, f"{where}.turns[{t}][{m}]"


def _conversation(folder: Path, position: int, report: ImportReport, counts: BeamCounts) -> dict[str, Any]:
    chat = chat_file(folder)
    if not chat.is_file():
        raise ImportFormatError(f"{folder}: neither {CHAT_TRUNCATED} nor {CHAT}; expected one of BEAM's conversation folders")
    turns: list[dict[str, Any]] = []
    ids: list[Any] = []
    with Source.open(chat) as source:
        for session, _, message, anchor, where in _messages(source):
            role = source.get(message, where, "role", str)
            if role not in ("user", "assistant"):
                raise source.fail(f"{where}.role", f"expected 'user' or 'assistant', got {role!r}")
            content = source.get(message, where, "content", str)
            ids.append(source.get(message, where, "id", int, required=False))
            date = source.get(message, where, "time_anchor", str, required=False) or anchor
            turns.append({"role": role, "content": content, "session": session, "date": date if date and date.strip() else None})
    if not turns:
        raise ImportFormatError(f"{chat}: the chat holds no message")
    distinct = None not in ids and len(set(ids)) == len(ids)
    turn_of = {message_id: index for index, message_id in enumerate(ids)} if distinct else {i: i for i in range(len(ids))}
    if distinct and any(message_id != index for index, message_id in enumerate(ids)):
        # Pages name a BEAM turn by its index as its message id (evals.benchmarks.beam.turn_name): say where they differ.
        report.notes.append(f"{chat}: message ids are not their places in reading order; pages name turns by place")
    if not distinct:
        counts.by_position += 1
        report.notes.append(f"{chat}: message ids repeat (or are missing); evidence ids resolved by position in reading order")
    history = len(turns)

    questions_path = folder / QUESTIONS
    with Source.open(questions_path) as source:
        abilities = source.data
        if not isinstance(abilities, dict):
            raise source.fail("", "expected an object: ability -> list of probing questions")
        dangling_here = 0
        for ability, items in abilities.items():
            for index, item in enumerate(source.items(items, ability)):
                where = f"{ability}[{index}]"
                question = source.get(item, where, "question", str)
                found, odd = evidence_ids(item.get("source_chat_ids") if isinstance(item, dict) else None)
                evidence = sorted({turn_of[i] for i in found if i in turn_of})
                dangling = len(odd) + sum(1 for i in found if i not in turn_of)
                dangling_here += dangling
                answerable = ability != ABSTENTION
                fact = next((answer_text(item[f]) for f in _FACT_FIELDS if isinstance(item.get(f), (str, int, float, list))), "")
                if not fact:
                    fact = "no answer in the conversation" if not answerable else question
                keywords = answer_keywords(fact, "\n".join(turns[t]["content"] for t in evidence)) if answerable else []
                sessions, _ = session_ids(turns, [turns[t]["session"] for t in evidence], history)
                rubric = source.get(item, where, "rubric", list, required=False) or []
                for n, criterion in enumerate(rubric):
                    if not isinstance(criterion, str) or not criterion.strip():
                        raise source.fail(f"{where}.rubric[{n}]", f"expected a rubric item (text), got {criterion!r}")
                test_at: dict[str, Any] = {}
                if rubric:
                    test_at["rubric"] = list(rubric)
                else:
                    report.notes.append(
                        f"{questions_path}: {where} has no rubric: `evals run --protocol beam` will refuse it "
                        "(BEAM's own code cannot score it), other protocols judge it as usual"
                    )
                turns.append(
                    question_turn(
                        report,
                        question,
                        fact=fact,
                        keywords=keywords,
                        evidence=evidence,
                        category=ability,
                        answerable=answerable,
                        sessions=sessions,
                        more=test_at,
                    )
                )
                counts.add(ability, bool(evidence), dangling)
    if dangling_here:
        plural = "" if dangling_here == 1 else "s"
        report.notes.append(f"{questions_path}: {dangling_here} evidence id{plural} name no message (counted, not used)")
    shown = f"; {dangling_here} evidence ids name no message" if dangling_here else ""
    return {
        "id": conversation_id(position, f"conv-{folder.name}", report, "folder name"),
        "description": f"BEAM {folder.parent.name} conversation {folder.name} ({chat.name}): {history} messages, "
        f"{len(turns) - history} probing questions after them{shown}.",
        "turns": turns,
    }


class _Folder:
    """A conversation's folder, as :func:`build` names where a problem is."""

    def __init__(self, folder: Path) -> None:
        self.name = str(folder)

    def fail(self, path: str, message: str) -> ImportFormatError:
        return ImportFormatError(f"{self.name}: {path or '(top level)'}: {message}")


def import_beam(folder: Path, out: Path) -> ImportReport:
    """Read one BEAM tier's folder and write its corpus into ``out``; return the counts (``report.counts``:
    per ability, the questions, those with evidence, and the dangling evidence ids: :class:`BeamCounts`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ImportFormatError(f"{folder}: not a folder; BEAM is imported from one tier's folder (chats/100K)")
    folders = conversation_folders(folder)
    if not folders:
        raise ImportFormatError(f"{folder}: holds no numbered conversation folder (1/, 2/, …); expected a tier of BEAM's chats/")
    report = ImportReport(source=str(folder), out=Path(out))
    counts = BeamCounts()
    report.counts = counts

    def conversations() -> Iterator[Conversation]:
        for position, conversation in enumerate(folders):
            yield build(_Folder(conversation), "", _conversation(conversation, position, report, counts))

    report.conversations = write_corpus(conversations(), out, benchmark="beam")
    dangling = sum(counts.dangling.values())
    report.notes.append(
        f"BEAM evidence: {sum(counts.with_evidence.values())} of {sum(counts.questions.values())} questions name evidence; "
        f"{dangling} evidence id{'' if dangling == 1 else 's'} name no message"
    )
    return report
