"""What every importer shares: reading the input, locating problems, answers to keywords, writing.

The input is a JSON file, or a zip archive of them (:class:`Source` reads a
file or the one .json inside an archive; :class:`Archive` every .json inside,
each named ``archive.zip!member``). Every problem in the input is one
:class:`ImportFormatError` naming the file and the JSON path (``[3].qa[7].evidence``) of what is wrong.

Memory does not grow with the input: a top-level array is read one element at
a time (:class:`evals.io.jsonfile.ArrayReader`), each conversation is written and
checked as it is made, then let go. The conversations go to a staging folder
that becomes the output folder only once every one has been written and
checked, so a bad file leaves the output folder as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evals.errors import EvalsError
from evals.io import jsonfile
from evals.model.corpus import (
    BENCHMARK_FILE,
    REFERENCES_FILE,
    Conversation,
    Reference,
    check_benchmark,
    check_file,
    check_references,
)

__all__ = [
    "ANSWER_KINDS",
    "Archive",
    "ImportFormatError",
    "ImportReport",
    "Source",
    "answer_keywords",
    "answer_text",
    "build",
    "conversation_id",
    "session_ids",
    "write_corpus",
]

MIN_KEYWORD = 4  # shorter answers ("yes", "3", "art") match unrelated records by chance


class ImportFormatError(EvalsError):
    """The input is not in the format the importer reads."""


class Source:
    """One input document, read as it is used, with helpers that fail with its name and a JSON path.

    :meth:`open` opens a JSON file, or the one .json file inside a zip archive; :class:`Archive`
    opens each .json file of an archive. A document whose top level is an array is read one
    element at a time (:meth:`elements`: a benchmark file is gigabytes, a question megabytes);
    any other is parsed whole on first use of :attr:`data`. Close it (or use ``with``).
    """

    def __init__(self, name: Path | str, reader: jsonfile.ArrayReader | None = None, closing: Any = None) -> None:
        if reader is None:  # Source(path): as :meth:`open`
            opened = Source.open(name)
            name, reader, closing = opened.name, opened._reader, opened._closing
        self.name = str(name)
        self._reader = reader
        self._closing = closing  # what to close with it (the archive it is a member of)
        self._data: Any = None
        self._parsed = False

    @classmethod
    def open(cls, path: Path | str) -> Source:
        """``path``: a JSON file, or a zip archive holding exactly one .json file."""
        archive = Archive.open(path)
        if archive is None:
            name = str(path)
            with _located():
                return cls(name, jsonfile.ArrayReader.open(path, jsonfile.MAX_BENCHMARK_FILE_BYTES, name))
        try:
            if len(archive.members) != 1:
                found = ", ".join(archive.members)
                raise ImportFormatError(f"{archive.name}: a zip archive must hold exactly one .json file; it holds {found}")
            return archive.source(archive.members[0], closing=archive)
        except BaseException:
            archive.close()
            raise

    def close(self) -> None:
        self._reader.close()
        if self._closing is not None:
            self._closing.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_array(self) -> bool:
        return self._reader.is_array

    def elements(self) -> Iterator[Any]:
        """The top-level array's elements, parsed one at a time, in order."""
        with _located():
            yield from self._reader.elements()

    @property
    def data(self) -> Any:
        """The whole document (not an array), parsed on first use."""
        if not self._parsed:
            with _located():
                self._data = self._reader.whole()
            self._parsed = True
            self.close()  # nothing more to read
        return self._data

    def fail(self, path: str, message: str) -> ImportFormatError:
        return ImportFormatError(f"{self.name}: {path or '(top level)'}: {message}")

    def get(self, obj: Any, path: str, key: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
        """``obj[key]`` checked to be of ``kind``; None when absent and not ``required``."""
        if not isinstance(obj, dict):
            raise self.fail(path, f"expected an object, got {_kind(obj)}")
        where = f"{path}.{key}" if path else key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(where, "required field is missing" if key not in obj else "expected a value, got null")
            return None
        value = obj[key]
        if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
            raise self.fail(where, f"expected {_names(kind)}, got {_kind(value)}")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, got {_kind(value)}")
        return value

    def labels(self, obj: Any, path: str, key: str, count: int | None = None) -> list[str] | None:
        """``obj[key]`` as a list of non-empty strings (session ids, dates), one per session when ``count``
        is given; None when absent."""
        where = f"{path}.{key}" if path else key
        value = self.get(obj, path, key, list, required=False)
        if value is None:
            return None
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                got = "a blank string" if isinstance(item, str) else _kind(item)
                raise self.fail(f"{where}[{index}]", f"expected a non-empty string, got {got}")
        if count is not None and len(value) != count:
            raise self.fail(where, f"{len(value)} entries for {count} sessions; expected one per session")
        return value


@contextmanager
def _located() -> Iterator[None]:
    """A file problem (JSON, size, encoding, memory) as the importer's one-line error."""
    try:
        yield
    except jsonfile.JSONFileError as exc:
        raise ImportFormatError(str(exc)) from None


ZIP_MAGIC = b"PK\x03\x04"


class Archive:
    """A zip archive's .json files (``members``, in natural order of their names: ``2.json`` before
    ``10.json``), each opened as a :class:`Source` named ``archive.zip!member`` when asked for and
    read as a stream: no more than the size limit in all, whatever the headers say."""

    def __init__(self, name: str, file: Any) -> None:
        import zipfile

        self.name = name
        self._file = file
        limit = jsonfile.MAX_BENCHMARK_FILE_BYTES
        try:
            self._zip = zipfile.ZipFile(file)
            names = [n for n in self._zip.namelist() if n.endswith(".json") and not n.startswith("__MACOSX/")]
            if not names:
                raise ImportFormatError(f"{name}: a zip archive must hold a .json file; it holds none")
            size = sum(self._zip.getinfo(member).file_size for member in names)
            if size > limit:  # refused before reading, when the headers say so
                raise ImportFormatError(f"{name}: {size} bytes of JSON inside; over {limit} bytes are not read")
        except zipfile.BadZipFile as exc:
            raise ImportFormatError(f"{name}: a damaged zip archive: {exc}") from None
        self.members = sorted(names, key=_natural)
        self._left = limit  # bytes of JSON the members may still hold between them

    @classmethod
    def open(cls, path: Path | str) -> Archive | None:
        """The archive ``path``, or None when ``path`` is not a zip archive."""
        try:
            with open(path, "rb") as file:
                if file.read(len(ZIP_MAGIC)) != ZIP_MAGIC:
                    return None
        except OSError:
            return None  # opening it as JSON says what is wrong with it
        name = str(path)
        with _located():
            file = jsonfile.open_regular(path, jsonfile.MAX_BENCHMARK_FILE_BYTES, name)
        try:
            return cls(name, file)
        except BaseException:
            file.close()
            raise

    def source(self, member: str, closing: Any = None) -> Source:
        """The member ``member``, read as a stream; close it before opening the next."""
        import zipfile

        name = f"{self.name}!{member}"
        try:
            stream = _Counted(self._zip.open(member), self)
            with _located():
                return Source(name, jsonfile.ArrayReader(stream, name, self._left), closing)
        except zipfile.BadZipFile as exc:
            raise ImportFormatError(f"{self.name}: a damaged zip archive: {exc}") from None

    def close(self) -> None:
        self._zip.close()
        self._file.close()


class _Counted:
    """A member's stream that counts what it gives against its archive's limit, and says where a
    damaged archive fails."""

    def __init__(self, stream: Any, archive: Archive) -> None:
        self._stream, self._archive = stream, archive

    def read(self, size: int = -1) -> bytes:
        import zipfile

        try:
            data = self._stream.read(size)
        except (zipfile.BadZipFile, EOFError, OSError) as exc:  # a bad CRC, a truncated member
            raise ImportFormatError(f"{self._archive.name}: a damaged zip archive: {exc}") from None
        self._archive._left -= len(data)
        if self._archive._left < 0:
            limit = jsonfile.MAX_BENCHMARK_FILE_BYTES
            raise ImportFormatError(f"{self._archive.name}: archives over {limit} bytes of JSON are not read")
        return data

    def close(self) -> None:
        self._stream.close()


def _natural(name: str) -> list[Any]:
    """Sort key: runs of digits compare as numbers (re.split alternates text and digits, so types line up)."""
    # ASCII digits only: '²' passes str.isdigit() and then fails int().
    return [int(part) if index % 2 else part for index, part in enumerate(re.split(r"([0-9]+)", name))]


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "an array", dict: "an object"}


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(_KIND_NAMES.get(k, k.__name__) for k in _as_tuple(kind))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", str: "string", int: "integer", float: "number", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


ANSWER_KINDS = (str, int, float, list)


def answer_text(answer: Any) -> str:
    """An answer as text: published files hold strings, and also plain numbers (a year) and,
    rarely, a list of parts (joined with ", ", which the keyword rule splits again)."""
    if isinstance(answer, list):
        return ", ".join(answer_text(part) for part in answer if not isinstance(part, (list, dict)))
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    return str(answer).strip()


_PARTS = re.compile(r"\s*(?:[,;]|\band\b|\bor\b)\s*", re.IGNORECASE)


def answer_keywords(answer: str, evidence_text: str) -> list[str]:
    """The keywords an answer gives, by one rule.

    The whole answer is the keyword if it occurs (case-insensitively) in the
    evidence text. Otherwise the answer is split at commas, semicolons, "and"
    and "or", and each part that occurs in the evidence text is a keyword. A
    candidate needs at least ``MIN_KEYWORD`` characters; surrounding quotes and
    final punctuation are dropped. An empty list means no part of the answer is
    in the evidence: the test point then falls back to its expected fact (the
    whole answer), which must occur verbatim in one retrieved record.
    """
    haystack = evidence_text.lower()

    def usable(text: str) -> str:
        text = text.strip(" \t\n\"'.!?")
        return text if len(text) >= MIN_KEYWORD and text.lower() in haystack else ""

    whole = usable(answer)
    if whole:
        return [whole]
    keywords: list[str] = []
    for part in _PARTS.split(answer):
        kept = usable(part)
        if kept and kept not in keywords:
            keywords.append(kept)
    return keywords


@dataclass
class ImportReport:
    """What an import produced, for the one-line summary."""

    source: str
    out: Path
    conversations: int = 0
    questions: int = 0
    unanswerable: int = 0
    with_keywords: int = 0
    with_evidence: int = 0
    notes: list[str] = field(default_factory=list)  # input quirks tolerated, e.g. unresolved evidence ids
    counts: Any = None  # what an importer counts beyond these, for its own report (BEAM's per ability)

    def summary(self) -> str:
        return (
            f"imported {self.source} -> {self.out}: {self.conversations} conversations, {self.questions} questions "
            f"({self.unanswerable} unanswerable, {self.with_keywords} with keywords, {self.with_evidence} with evidence turns)"
        )


def question_turn(
    report: ImportReport,
    question: str,
    *,
    fact: str,
    keywords: list[str],
    evidence: list[int],
    category: str | None,
    answerable: bool,
    sessions: list[str],
    more: dict[str, Any] | None = None,
    **turn: Any,
) -> dict[str, Any]:
    """The turn a test point is asked at (never recorded by the memory), counted in ``report``: its question, expected
    fact and keywords, evidence turns and sessions, category and whether it is answerable (``more``: a benchmark's own
    fields of it, e.g. BEAM's rubric; ``turn``: the turn's other fields, e.g. its date)."""
    report.questions += 1
    report.unanswerable += not answerable
    report.with_keywords += bool(keywords)
    report.with_evidence += bool(evidence)
    test_at = {
        "question": question,
        "expected_fact": fact,
        "expected_keywords": keywords,
        "evidence_turns": evidence,
        "category": category,
        "answerable": answerable,
        "evidence_sessions": sessions,
        **(more or {}),
    }
    return {"role": "user", "content": question, "record": False, **turn, "test_at": test_at}


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "conversation"


MAX_NAME = 80  # characters of a name kept in an id (and so in a file name, which most systems cap at 255 bytes)


def conversation_id(position: int, name: str, report: ImportReport | None = None, what: str = "id") -> str:
    """``NNN_name``: file-name order is input order, and the id is the file's stem. A name longer
    than MAX_NAME is cut, with a digest of the whole name so that ids stay distinct (noted in ``report``)."""
    safe = _safe(name)
    if len(safe) > MAX_NAME:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe = f"{safe[: MAX_NAME - 9]}-{digest}"
        cid = f"{position:03d}_{safe}"
        if report is not None:
            report.notes.append(f"[{position}]: {what} of {len(name)} characters shortened to {cid!r} for its file name")
        return cid
    return f"{position:03d}_{safe}"


def session_ids(turns: Sequence[dict[str, Any]], wanted: Sequence[str], before: int) -> tuple[list[str], int]:
    """The ``wanted`` sessions that some recorded turn before ``before`` belongs to, in the order their
    first turns come, each once; and how many of ``wanted`` name no such session (for the report)."""
    held = {t["session"] for t in turns[:before] if t.get("session") is not None and t.get("record", True)}
    order = {}
    for index, turn in enumerate(turns[:before]):
        order.setdefault(turn.get("session"), index)
    found = sorted({w for w in wanted if w in held}, key=lambda w: order[w])
    return found, sum(1 for w in wanted if w not in held)


def build(source: Source, path: str, data: dict[str, Any]) -> Conversation:
    """A Conversation from plain data; a problem here is the importer's, reported against the input item."""
    try:
        return Conversation.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise source.fail(path, f"cannot make a valid conversation from it: {error['msg']} at {error['loc']}") from None


def write_corpus(
    conversations: Iterable[Conversation], out: Path, references: Sequence[Reference] = (), benchmark: str | None = None
) -> int:
    """Write one JSON file per conversation into ``out`` (new, or an empty folder), all or nothing;
    ``references`` (published figures for this benchmark) as ``references.json``, if any; and the
    benchmark's name as ``benchmark.json``, which decides how runs on the corpus are judged.
    Return how many conversations were written.

    ``conversations`` may be a generator reading the input as it goes: each conversation is
    written to a staging folder, read back and checked (:func:`evals.model.corpus.check_file`) while it
    is the only one in memory; the staging folder becomes ``out`` once all are written."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ImportFormatError(f"output folder {out} exists and is not empty; give a new or empty folder")
    staging = out.with_name(f".{out.name}.importing-{os.getpid()}")
    written: set[str] = set()
    try:
        staging.mkdir(parents=True)
        for conversation in conversations:
            path = staging / f"{conversation.id}.json"
            if conversation.id in written:  # a bug in an importer, not in the input: say so plainly
                raise ImportFormatError(f"internal error: two imported conversations have the id {conversation.id!r}")
            document = {"schema_version": conversation.schema_version, **conversation.model_dump(exclude_defaults=True)}
            text = json.dumps(document, indent=2, ensure_ascii=False)
            del document
            path.write_text(text + "\n", encoding="utf-8")
            del text
            _, problems = check_file(path)
            if problems:
                raise ImportFormatError(f"internal error: the imported corpus does not validate: {problems[0]}")
            written.add(conversation.id)
        if not written:
            raise ImportFormatError("the input holds no conversation; nothing to write")
        if references:
            rows = [reference.model_dump(exclude_none=True) for reference in references]
            (staging / REFERENCES_FILE).write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            _, problems = check_references(staging)
            if problems:
                raise ImportFormatError(f"internal error: the imported corpus does not validate: {problems[0]}")
        if benchmark is not None:
            (staging / BENCHMARK_FILE).write_text(json.dumps({"name": benchmark}) + "\n", encoding="utf-8")
            _, problems = check_benchmark(staging)
            if problems:
                raise ImportFormatError(f"internal error: the imported corpus does not validate: {problems[0]}")
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except OSError as exc:
        where = f": {out / Path(exc.filename).name}" if exc.filename and Path(exc.filename).parent == staging else ""
        raise ImportFormatError(f"cannot write {out}: {exc.strerror or exc}{where}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return len(written)
