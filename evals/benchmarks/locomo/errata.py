"""A published answer-key audit of LoCoMo (github.com/dial481/locomo-audit) -> an errata file (:mod:`evals.benchmarks.errata`).

The audit lists, per LoCoMo conversation, the questions whose key it finds wrong, in
``audit/errors_conv_N.json``: an array of objects with ``question_id`` (``locomo_N_qaM``: sample N of
``locomo10.json`` and its question ``qa[M]``, both counted from 0), ``question``, ``golden_answer``,
``category``, ``error_type``, ``cited_evidence`` and ``correct_evidence`` (LoCoMo ``dia_id`` s),
``correct_answer`` and a ``reasoning`` text. Its data are CC BY-NC 4.0, so none of it is shipped with
this tool: the errata file is made from a copy of the audit at use time.

Each entry becomes one erratum on the test point LoCoMo's importer makes of that question (resolved in
the LoCoMo file the audit audited: its turns and ``dia_id`` s, by the importer's own rules):

* ``correct_evidence`` naming other turns than ``cited_evidence`` -> ``evidence_turns``;
* ``correct_evidence`` empty (the audit finds no turn that answers the question as asked) ->
  ``exclude: true``: the question is invalid and leaves the figure with errata;
* ``correct_answer`` other than ``golden_answer`` -> ``expected_fact``, with ``expected_keywords`` made
  from it by the importer's rule over the (corrected) evidence turns' text; except for ``error_type``
  ``WRONG_CITATION``, which by the audit's taxonomy leaves the answer right (its ``correct_answer`` then
  restates the key with a remark: "Cakes (answer is correct, D25:19 should be D25:20)");
* an ``error_type`` given to ``exclude_kinds`` -> ``exclude: true`` as well.

An entry whose corrections change nothing once resolved is left out and counted. The audit's own
prose (``reasoning``) is not carried: each erratum's ``reason`` is written here from its fields, and
its ``source`` names the repository, commit, file and entry. The file as a whole is recorded with the
repository, commit, license line, each audit file's SHA-256 and the LoCoMo file's.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.benchmarks.kit import (
    ANSWER_KINDS,
    EvalsError,
    ImportReport,
    answer_keywords,
    answer_text,
    file_sha256,
    parse_json,
    read_bytes,
)
from evals.benchmarks.locomo.importer import _DIA_ID, _conversation, _samples, _sessions

__all__ = ["AUDIT_REPOSITORY", "AuditReport", "convert_locomo_audit"]

AUDIT_REPOSITORY = "dial481/locomo-audit"
_FILE = re.compile(r"errors_conv_(\d+)\.json")
_QUESTION_ID = re.compile(r"locomo_(\d+)_qa(\d+)")
MAX_AUDIT_FILE_BYTES = 64 * 1024**2
CITATION_ONLY = "WRONG_CITATION"  # the audit's type for a right answer with wrong evidence ids


@dataclass
class AuditReport:
    """What a conversion read and wrote."""

    files: int = 0
    entries: int = 0
    written: int = 0
    evidence: int = 0  # errata correcting evidence
    answers: int = 0  # errata correcting the answer
    excluded: int = 0
    unchanged: list[str] = field(default_factory=list)  # entries whose corrections change nothing once resolved
    unresolved_ids: list[str] = field(default_factory=list)  # "locomo_0_qa1: D99:1", corrected ids naming no turn
    document: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{self.entries} entries in {self.files} audit files -> {self.written} errata ({self.evidence} correct evidence, "
            f"{self.answers} correct the answer, {self.excluded} exclude the question); {len(self.unchanged)} change nothing "
            f"once resolved, {len(self.unresolved_ids)} corrected evidence ids name no turn"
        )


def _audit_files(source: Path) -> list[tuple[int, Path]]:
    """The audit's ``errors_conv_N.json`` files, in ``audit/`` of a checkout or in ``source`` itself, by N."""
    folder = source / "audit" if (source / "audit").is_dir() else source
    found = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := _FILE.fullmatch(p.name)) and p.is_file())
    if not found:
        raise EvalsError(
            f"{source}: no errors_conv_N.json files (in it or in its audit/ folder); give a copy of {AUDIT_REPOSITORY}"
        )
    return found


@dataclass(frozen=True)
class _Question:
    turn: int  # the test point's turn in the imported corpus
    question: str
    answer: str
    evidence: list[str]  # the dia ids as the file gives them


@dataclass
class _Sample:
    name: str
    contents: list[str]  # every turn's text, as the importer writes it
    turn_of: dict[str, int]  # dia_id -> turn, as the importer resolves it
    questions: dict[int, _Question]  # qa position -> the test point made of it (questions the importer skips: absent)


def _locomo(file: Path) -> list[_Sample]:
    """Each LoCoMo conversation as the importer makes it: its turns, ``dia_id`` s and test points by qa position."""
    samples = []
    for position, sample in enumerate(_samples(file)):
        made = _conversation(sample, position, ImportReport(source=str(file), out=file))
        turns = made["turns"]
        turn_of: dict[str, int] = {}
        count = 0
        for _, _, session, _ in _sessions(sample.source, sample.conversation, sample.conversation_path):
            for turn in session:
                turn_of.setdefault(turn["dia_id"], count)  # the importer's rule: the first turn with that id
                count += 1
        points = [(i, t["test_at"]) for i, t in enumerate(turns) if t.get("test_at")]
        questions, next_point = {}, 0
        for number, item in enumerate(sample.holder["qa"]):
            # Questions the importer skipped (an empty answer) have no test point: aligned by question text.
            if next_point < len(points) and points[next_point][1]["question"] == item.get("question"):
                evidence = [e for e in item.get("evidence") or [] if isinstance(e, str)]
                answer = answer_text(item["answer"]) if isinstance(item.get("answer"), ANSWER_KINDS) else ""
                questions[number] = _Question(points[next_point][0], item["question"], answer, evidence)
                next_point += 1
        samples.append(_Sample(made["id"].split("_", 1)[-1], [t["content"] for t in turns], turn_of, questions))
    return samples


def _turns(ids: list[str], turn_of: dict[str, int], unresolved: list[str]) -> list[int]:
    """The turns ``ids`` name (the importer's rule: every ``Dn:m`` in an entry), sorted; ids naming none go to ``unresolved``."""
    turns = set()
    for entry in ids:
        for dia_id in _DIA_ID.findall(entry) or [entry]:
            if dia_id in turn_of:
                turns.add(turn_of[dia_id])
            else:
                unresolved.append(dia_id)
    return sorted(turns)


def convert_locomo_audit(
    source: Path, locomo: Path, *, commit: str | None = None, exclude_kinds: frozenset[str] = frozenset()
) -> AuditReport:
    """The errata of the audit at ``source`` (a copy of the repository, or its ``audit/`` folder) against the
    LoCoMo file ``locomo`` it audited; the errata file's document is ``report.document``."""
    source, locomo = Path(source), Path(locomo)
    files = _audit_files(source)
    samples = _locomo(locomo)
    report = AuditReport(files=len(files))
    where_from = f"{AUDIT_REPOSITORY}@{commit[:12]}" if commit else AUDIT_REPOSITORY
    errata: list[dict[str, Any]] = []
    digests: dict[str, str] = {}
    for number, path in files:
        name = path.relative_to(source).as_posix() if path.is_relative_to(source) else path.name
        data = read_bytes(path, MAX_AUDIT_FILE_BYTES)  # refused by its size before it is read, never read whole
        digests[name] = hashlib.sha256(data).hexdigest()
        entries = parse_json(data, str(path))
        if not isinstance(entries, list):
            raise EvalsError(f"{path}: expected an array of audit entries")
        for index, entry in enumerate(entries):
            report.entries += 1
            made = _erratum(path, f"[{index}]", entry, number, samples, exclude_kinds, report)
            if made is not None:
                made["source"] = f"{where_from} {name} {entry['question_id']}"
                errata.append(made)
    license_file = source / "LICENSE"
    license_line = (
        next(
            (line.strip() for line in license_file.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()),
            None,
        )
        if license_file.is_file()
        else None
    )
    report.written = len(errata)
    report.document = {
        "source": f"{where_from}: an answer-key audit of LoCoMo" + (f" ({license_line})" if license_line else ""),
        "benchmark": "locomo",
        "origin": {
            "format": "locomo-audit",
            "repository": AUDIT_REPOSITORY,
            "commit": commit,
            "license": license_line,
            "files": digests,
            "locomo": {"file": locomo.name, "sha256": file_sha256(locomo)},
            "excluded_kinds": sorted(exclude_kinds),
            "entries": report.entries,
            "unchanged": report.unchanged,
            "unresolved_ids": report.unresolved_ids,
        },
        "errata": errata,
    }
    from evals.benchmarks.kit import check_errata_document

    check_errata_document(report.document, "the errata made of the audit")  # never written where its reader would refuse it
    return report


def _erratum(
    path: Path, where: str, entry: Any, number: int, samples: list[_Sample], exclude_kinds: frozenset[str], report: AuditReport
) -> dict[str, Any] | None:
    """One audit entry as an erratum (None: it changes nothing); an EvalsError names the file and the entry."""

    def fail(key: str, message: str) -> EvalsError:
        return EvalsError(f"{path}: {where}.{key}: {message}")

    if not isinstance(entry, dict):
        raise EvalsError(f"{path}: {where}: expected an object")
    for key, kind in (
        ("question_id", str),
        ("question", str),
        ("error_type", str),
        ("cited_evidence", list),
        ("correct_evidence", list),
    ):
        value = entry.get(key)
        if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
            raise fail(key, "expected a string" if kind is str else 'expected an array of dia ids (strings such as "D1:3")')
    if not entry["error_type"].strip():
        raise fail("error_type", "expected the audit's classification of the error, a non-empty string")
    for key in ("golden_answer", "correct_answer"):
        if not isinstance(entry.get(key), ANSWER_KINDS):
            raise fail(key, "expected the answer")
    found = _QUESTION_ID.fullmatch(entry["question_id"])
    if found is None or int(found.group(1)) != number or int(found.group(1)) >= len(samples):
        raise fail(
            "question_id",
            f"{entry['question_id']!r} is not locomo_{number}_qaM, a question of conversation {number} of the LoCoMo file",
        )
    sample = samples[number]
    question = sample.questions.get(int(found.group(2)))
    if question is None or question.question != entry["question"]:
        raise fail(
            "question",
            f"is not question {found.group(2)} of {sample.name} in the LoCoMo file; the audit is of another version of it",
        )
    qid, kind = entry["question_id"], entry["error_type"]
    if answer_text(entry["golden_answer"]) != question.answer or entry["cited_evidence"] != question.evidence:
        raise fail(
            "golden_answer",
            f"the key it audits is not {sample.name}'s in the LoCoMo file (answer or evidence differ); "
            "the audit is of another version of it",
        )
    made: dict[str, Any] = {
        "id": qid,
        "kind": kind,
        "conversation": sample.name,
        "turn": question.turn,
        "question": question.question,
    }
    unresolved: list[str] = []
    published = _turns(question.evidence, sample.turn_of, [])
    corrected = _turns(entry["correct_evidence"], sample.turn_of, unresolved)
    report.unresolved_ids.extend(f"{qid}: {i}" for i in unresolved)
    said = f"{AUDIT_REPOSITORY} {kind}"
    if not entry["correct_evidence"] or kind in exclude_kinds:
        why = (
            "it finds no turn that answers the question as asked"
            if not entry["correct_evidence"]
            else f"{kind} excluded when converting"
        )
        report.excluded += 1
        return made | {"exclude": True, "reason": f"{said}: {why}"}
    reasons = []
    if corrected and corrected != published:
        made["evidence_turns"] = corrected
        reasons.append(f"evidence {', '.join(question.evidence) or '(none)'} -> {', '.join(entry['correct_evidence'])}")
        report.evidence += 1
    answer = answer_text(entry["correct_answer"])
    if kind != CITATION_ONLY and answer and answer != question.answer:
        evidence_text = "\n".join(sample.contents[t] for t in (corrected or published))
        made["expected_fact"] = answer
        made["expected_keywords"] = answer_keywords(answer, evidence_text)
        reasons.append("answer corrected")
        report.answers += 1
    if not reasons:
        report.unchanged.append(qid)
        return None
    return made | {"reason": f"{said}: {'; '.join(reasons)}"}
